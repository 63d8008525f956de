import pytest
from django.urls import reverse

from memsite.spaces.models import Space
from memsite.spaces.principals import token_principal
from memsite.spaces.services import token_create
from tests.factories import UserFactory, acting, default_space, system
from tests.llm.factories import days_ago, make_call

pytestmark = pytest.mark.django_db

PAYLOAD = "<script>alert('pwned')</script>"


@pytest.fixture
def logged_in(client, user):
    client.force_login(user)
    return client


@pytest.mark.parametrize("name, args", [("llm:ledger", []), ("llm:call", [1])])
def test_login_required(client, name, args):
    response = client.get(reverse(name, args=args))

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_ledger_lists_calls_with_totals(logged_in):
    make_call(purpose="route", model="gpt-4o-mini", prompt_tokens=100, completion_tokens=20)
    make_call(purpose="answer", model="gpt-4.1", ok=False, error_reason="timeout", prompt_tokens=7, completion_tokens=0)

    response = logged_in.get(reverse("llm:ledger"))

    assert response.status_code == 200
    page = response.content.decode()
    assert response.context["total"].calls == 2
    assert response.context["total"].tokens == 127
    assert [row.key for row in response.context["by_purpose"]] == ["answer", "route"]
    assert "gpt-4.1" in page and "error (timeout)" in page
    assert "offline heuristics" in page  # the provider in use is shown


def test_ledger_filters(logged_in):
    make_call(purpose="route", model="gpt-4o-mini")
    answer = make_call(purpose="answer", model="gpt-4.1", ok=False)
    make_call(purpose="answer", model="gpt-4.1", ok=False, created_at=days_ago(9))

    response = logged_in.get(
        reverse("llm:ledger"),
        {"purpose": "answer", "model": "gpt-4.1", "status": "error", "date_from": days_ago(1).date().isoformat()},
    )

    assert list(response.context["page"].object_list) == [answer]
    assert response.context["total"].calls == 1


def test_invalid_filter_values_filter_nothing(logged_in):
    make_call()

    response = logged_in.get(reverse("llm:ledger"), {"purpose": "nonsense", "date_from": "yesterday"})

    assert response.status_code == 200
    assert response.context["total"].calls == 1


def test_htmx_gets_the_results_partial(logged_in):
    make_call(purpose="summarize")

    response = logged_in.get(reverse("llm:ledger"), {"purpose": "summarize"}, HTTP_HX_REQUEST="true")

    page = response.content.decode()
    assert page.lstrip().startswith('<div id="llm-results">')
    assert "<form" not in page and "summarize" in page


def test_call_page_shows_messages_and_reply_escaped(logged_in):
    call = make_call(
        messages=[{"role": "system", "content": "Be safe."}, {"role": "user", "content": PAYLOAD}],
        reply=f'{{"note": "{PAYLOAD}"}}',
        ok=False,
        error_reason="invalid_reply",
        error=PAYLOAD,
    )

    response = logged_in.get(reverse("llm:call", args=[call.pk]))

    page = response.content.decode()
    assert response.status_code == 200
    assert PAYLOAD not in page
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in page
    assert page.count("&lt;script&gt;") == 3  # the message, the reply and the error
    assert "Be safe." in page


def test_missing_call_is_404(logged_in):
    assert logged_in.get(reverse("llm:call", args=[999])).status_code == 404


def test_status_is_in_every_template_context(logged_in, settings):
    settings.MEMSITE_LLM_PROVIDER = "openai"
    settings.OPENAI_API_KEY = "sk-test"
    settings.MEMSITE_LLM_MODEL = "gpt-4.1"

    status = logged_in.get(reverse("llm:ledger")).context["llm_status"]

    assert (status.provider, status.model, status.is_offline) == ("openai", "gpt-4.1", False)
    assert str(status) == "openai · gpt-4.1"


def test_the_pages_of_a_filtered_ledger_keep_the_filter(logged_in):
    for _ in range(51):
        make_call(purpose="answer")
    make_call(purpose="route")
    page = logged_in.get(reverse("llm:ledger"), {"purpose": "answer"}).content.decode()
    assert "page 1 of 2" in page and '?purpose=answer&amp;page=2">next</a>' in page
    second = logged_in.get(reverse("llm:ledger"), {"purpose": "answer", "page": 2}).content.decode()
    assert "page 2 of 2" in second and '?purpose=answer&amp;page=1">previous</a>' in second


def test_another_spaces_calls_are_not_in_the_ledger(logged_in):
    other = Space.objects.create(slug="other", name="Other")
    theirs = make_call(by=system(other), purpose="answer", schema_name="TheirSchema")
    assert "TheirSchema" not in logged_in.get(reverse("llm:ledger")).content.decode()
    assert logged_in.get(reverse("llm:call", args=[theirs.pk])).status_code == 404


def test_a_call_says_whose_work_it_was_and_through_which_token(logged_in, user):
    token = token_create(member=user, space=default_space(), name=PAYLOAD).token
    through = make_call(by=token_principal(token))
    page = logged_in.get(reverse("llm:call", args=[through.pk])).content.decode()
    assert f"{user.username}, through the token &lt;script&gt;" in page and PAYLOAD not in page
    upkeep = logged_in.get(reverse("llm:call", args=[make_call().pk])).content.decode()
    assert "memsite's own upkeep in the space" in upkeep
    gone = make_call(by=acting(UserFactory()))
    gone.user.delete()  # the row stays, with no user: still a user's work, not memsite's
    assert "a user since deleted" in logged_in.get(reverse("llm:call", args=[gone.pk])).content.decode()
