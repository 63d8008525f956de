import pytest

from memory import services
from memory.models import Search
from memsite.errors import InvalidInput
from tests.factories import system


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"questions": []}, "questions must be a list of 1 to 20 strings."),
        ({"questions": ["q"] * 21}, "questions must be a list of 1 to 20 strings."),
        ({"questions": "one string"}, "questions must be a list of 1 to 20 strings."),
        ({"questions": ["fine", "  "]}, "Question 2 must be a non-empty string."),
        ({"questions": [3]}, "Question 1 must be a non-empty string."),
        ({"questions": ["x" * 1001]}, "Question 1 is longer than 1000 characters."),
        ({"questions": ["q"], "context": "x" * 20_001}, "context must be a string of at most 20000 characters."),
        ({"questions": ["q"], "output": "both"}, "output must be one of answer, node."),
        ({"questions": ["q"], "fallback": "web"}, "fallback must be one of ask_user, none."),
        ({"questions": ["q"], "max_llm_calls": 0}, "max_llm_calls must be an integer from 1 to 1000."),
        ({"questions": ["q"], "max_tokens": True}, "max_tokens must be an integer from 1 to 5000000."),
        ({"questions": ["q"], "timeout_s": 3601}, "timeout_s must be an integer from 1 to 3600."),
    ],
)
def test_bad_input_is_refused_and_nothing_is_queued(db, options, message):
    with pytest.raises(InvalidInput) as refused:
        services.search_start(by=system(), **options)
    assert refused.value.message == message
    assert not Search.objects.exists()


def test_a_search_is_queued_with_default_budgets_and_runs_after_commit(
    db, settings, django_capture_on_commit_callbacks, monkeypatch
):
    queued = []
    monkeypatch.setattr("memory.tasks.search_run.delay", lambda **kwargs: queued.append(kwargs))
    with django_capture_on_commit_callbacks(execute=True):
        search = services.search_start(by=system(), questions=[" Where   is it? ", "Where is it?"])

    assert queued == [{"search_id": search.pk}]
    assert search.questions == ["Where is it?"]  # whitespace folded, duplicates dropped
    assert (search.max_llm_calls, search.max_tokens, search.timeout_s) == (
        settings.MEMSITE_SEARCH_MAX_LLM_CALLS,
        settings.MEMSITE_SEARCH_MAX_TOKENS,
        settings.MEMSITE_SEARCH_TIMEOUT_S,
    )
    assert search.status == Search.Status.QUEUED and search.state["answers"][0]["complete"] is False
