"""The questions searches put to the user: those waiting, and answering one, as the REST API's
/api/questions/ lists and answers them."""

from typing import Annotated, Any

from pydantic import ConfigDict, Field, StringConstraints

from memory import selectors, services
from memory.api.serializers import SearchQuestionSerializer
from memory.services.searches import MAX_ANSWER_CHARS
from memsite.spaces.principals import Principal
from tools.logic.schemas import ToolArgs
from tools.registry import Tool

PENDING_PAGE = 20
MAX_PENDING_PAGE = 100


class PendingArgs(ToolArgs):
    model_config = ConfigDict(json_schema_extra={"examples": [{}, {"limit": 5}]})

    limit: int = Field(PENDING_PAGE, ge=1, le=MAX_PENDING_PAGE, description="The newest this many, 1 to 100.")


class AnswerArgs(ToolArgs):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"question_id": 7, "answer": "Staging listens on port 8443."}]}
    )

    question_id: int = Field(description="The question's id, from questions_pending.")
    answer: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_ANSWER_CHARS)] = Field(
        description="The answer; the waiting search ends with it, and it is kept in the user folder."
    )


def pending_run(principal: Principal, args: PendingArgs) -> dict[str, Any]:
    # Only the search's id is shown: no need to load each search's row.
    pending = selectors.search_questions_pending(space=principal.space).select_related(None)
    questions = list(pending[: args.limit + 1])
    return {
        "questions": SearchQuestionSerializer(questions[: args.limit], many=True).data,
        "more": len(questions) > args.limit,
    }


def answer_run(principal: Principal, args: AnswerArgs) -> dict[str, Any]:
    question = selectors.search_question_get(space=principal.space, question_id=args.question_id)
    question = services.search_question_answer(question=question, answer=args.answer, by=principal)
    return SearchQuestionSerializer(question).data


TOOLS = [
    Tool(
        name="questions_pending",
        description="Questions searches could not answer from memory and put to the user, newest first.",
        args=PendingArgs,
        run=pending_run,
        writes=False,
    ),
    Tool(
        name="question_answer",
        description="Answer a pending question: the search waiting for it ends with the answer, which is also kept "
        "as a document in the user folder.",
        args=AnswerArgs,
        run=answer_run,
        writes=True,
    ),
]
