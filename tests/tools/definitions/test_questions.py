"""questions_pending and question_answer: the questions searches wait on, and answering one, as
/api/questions/ lists and answers them."""

import json

import pytest
from rest_framework.test import APIClient

from memory.models import Node, Search, SearchQuestion
from memsite.errors import Conflict, NotFound
from memsite.spaces.logic import Role
from memsite.spaces.models import Space
from tests.factories import SearchFactory, token_for
from tests.tools.conftest import principal

pytestmark = pytest.mark.django_db


def pending(*questions: str) -> SearchQuestion:
    search = SearchFactory(status=Search.Status.WAITING, questions=list(questions))
    return SearchQuestion.objects.create(search=search, questions=list(questions))


def test_pending_lists_the_newest_first_as_the_api(call, editor):
    older, newer = pending("Which port?"), pending("Which host?")
    rest = APIClient()
    rest.credentials(HTTP_AUTHORIZATION=f"Token {token_for(editor.user)}")

    listed = call("questions_pending")
    first = call("questions_pending", limit=1)

    assert [question["id"] for question in listed["questions"]] == [newer.pk, older.pk] and not listed["more"]
    assert json.loads(json.dumps(listed["questions"])) == rest.get("/api/questions/").json()["results"]
    assert [question["id"] for question in first["questions"]] == [newer.pk] and first["more"]


def test_an_answer_ends_the_waiting_search_and_is_kept(call, editor, internal):
    question = pending("Which port does staging use?")

    result = call("question_answer", question_id=question.pk, answer="  Port 8443. ")

    assert (result["status"], result["answer"], result["answered_by"]) == (
        "answered",
        "Port 8443.",
        editor.user.username,
    )
    assert Node.objects.get(pk=result["document"]).parent_id == internal["user"].pk
    assert call("questions_pending")["questions"] == []
    with pytest.raises(Conflict):
        call("question_answer", question_id=question.pk, answer="Again.")


def test_another_space_s_questions_are_neither_listed_nor_answered(call):
    question = pending("Which port?")
    outsider = principal(Role.OWNER, space=Space.objects.create(slug="other", name="Other"))

    assert call("questions_pending", as_=outsider) == {"questions": [], "more": False}
    with pytest.raises(NotFound, match=f"No question with id {question.pk}."):
        call("question_answer", as_=outsider, question_id=question.pk, answer="Port 8443.")
    question.refresh_from_db()
    assert question.status == SearchQuestion.Status.PENDING
