"""A tool called through a token acts as the token does through the API: the work it starts is
charged to the token's own budget, and what it writes stays under the token's folder."""

import pytest

from agents.graphs.models import GraphOp
from memory.models import Search, SearchQuestion
from memsite.errors import Forbidden
from memsite.quotas.logic import QuotaExceeded
from memsite.spaces.principals import Principal, token_principal
from memsite.spaces.services import token_create
from tests.factories import GraphFactory, SearchFactory, UserFactory, default_space
from tests.llm.factories import make_call
from tools.registry import tool_call

pytestmark = pytest.mark.django_db


def through_token(**options) -> Principal:
    made = token_create(member=UserFactory(), space=default_space(), name="node", **options)
    principal = token_principal(made.token)
    assert principal is not None
    return principal


def test_a_search_started_through_a_spent_token_is_refused_with_the_tokens_budget():
    node = through_token(llm_daily_calls=1)
    make_call(by=token_principal(node.token))
    with pytest.raises(QuotaExceeded) as refused:
        tool_call(node, "memory_search", {"questions": ["Which port?"], "wait_s": 0})
    assert refused.value.data["quota"] == "token_daily_llm_budget"
    assert not Search.objects.exists()


def test_work_a_tool_starts_records_the_token(monkeypatch):
    monkeypatch.setattr("agents.graphs.tasks.graph_work.delay", lambda graph_id: None)
    node = through_token()
    tool_call(node, "memory_search", {"questions": ["Which port?"], "wait_s": 0})
    assert Search.objects.get().token_id == node.token.pk
    tool_call(node, "graph_recall", {"graph": GraphFactory().pk})
    assert GraphOp.objects.get(kind=GraphOp.Kind.RECALL).token_id == node.token.pk


def test_an_answer_through_a_token_limited_elsewhere_is_refused():
    search = SearchFactory(status=Search.Status.WAITING)
    question = SearchQuestion.objects.create(search=search, questions=search.questions)
    node = through_token(write_under="/swarmstar/nodes/a/")
    with pytest.raises(Forbidden, match="This token writes only under /swarmstar/nodes/a/"):
        tool_call(node, "question_answer", {"question_id": question.pk, "answer": "Port 8000."})
    question.refresh_from_db()
    assert question.status == SearchQuestion.Status.PENDING
