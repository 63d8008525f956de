"""What every test that makes LLM calls may assert of the ledger: no call was charged to nobody."""

from memsite.llm.models import LLMCall


def assert_every_call_has_a_principal() -> None:
    """Each ledger row names whose work it was: a user, or memsite itself. A row acting for a
    user with no user on it was charged to nobody."""
    orphans = LLMCall.objects.filter(user__isnull=True, acted_as=LLMCall.ActedAs.USER)
    assert not orphans.exists(), f"LLM calls charged to nobody: {list(orphans.values('id', 'purpose', 'space_id'))}"
    assert LLMCall.objects.exists(), "no LLM call was made: the assertion would hold of anything"
