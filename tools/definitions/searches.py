"""The search tools: a search started and waited for, and a search looked up again, answered
with its answers and their citations, or with its id and status to poll."""

from typing import Annotated, Any

from pydantic import ConfigDict, Field, StringConstraints

from memory import selectors, services
from memory.api.serializers import SearchSpentSerializer
from memory.models import Search
from memory.selectors.searches import MAX_WAIT_S
from memory.services.searches import BUDGET_CAPS, MAX_CONTEXT_CHARS, MAX_QUESTION_CHARS, MAX_QUESTIONS
from memsite.spaces.principals import Principal
from tools.definitions.refs import NodeRef, node_of
from tools.logic.schemas import ToolArgs
from tools.registry import Tool

WAIT_S = 10  # a tool's default wait for a search to end

Question = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_QUESTION_CHARS)]
WaitSeconds = Annotated[
    int, Field(ge=0, le=MAX_WAIT_S, description=f"Seconds (0 to {MAX_WAIT_S}) to wait for the search to end.")
]


class Budgets(ToolArgs):
    max_llm_calls: int | None = Field(None, ge=1, le=BUDGET_CAPS["max_llm_calls"], description="LLM calls.")
    max_tokens: int | None = Field(None, ge=1, le=BUDGET_CAPS["max_tokens"], description="Prompt and reply tokens.")
    timeout_s: int | None = Field(None, ge=1, le=BUDGET_CAPS["timeout_s"], description="Seconds.")


class SearchArgs(ToolArgs):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"questions": ["Which port does staging listen on?"]},
                {"questions": ["Where are the deployment notes?"], "output": "node", "start": "/projects", "wait_s": 0},
            ]
        }
    )

    questions: list[Question] = Field(min_length=1, max_length=MAX_QUESTIONS, description="1 to 20 questions.")
    context: Annotated[str, StringConstraints(max_length=MAX_CONTEXT_CHARS)] = Field(
        "", description="What you are doing, shown to the search."
    )
    start: NodeRef | None = Field(None, description="The node to search under (a path or an id); null for all.")
    output: Search.Output = Field(
        Search.Output.ANSWER, strict=False, description="answer: answers in words; node: also the nodes that answer."
    )
    fallback: Search.Fallback = Field(
        Search.Fallback.NONE,
        strict=False,
        description="ask_user: put what memory cannot answer to the user and wait; none: end with what was found.",
    )
    budgets: Budgets | None = Field(None, description="LLM calls, tokens and seconds it may spend; absent: defaults.")
    wait_s: WaitSeconds = WAIT_S


class SearchGetArgs(ToolArgs):
    model_config = ConfigDict(json_schema_extra={"examples": [{"search_id": 42}, {"search_id": 42, "wait_s": 0}]})

    search_id: int = Field(description="The search's id, from memory_search.")
    wait_s: WaitSeconds = WAIT_S


def search_outcome(search: Search) -> dict[str, Any]:
    """The search's status and, once it has ended, its result as stored: the answers with their
    citations (node ids, character ranges and dates), the nodes that answer and what stayed open."""
    question = selectors.search_question_pending(search=search)
    outcome: dict[str, Any] = {
        "id": search.pk,  # as the REST API names it
        "search_id": search.pk,  # its name before 0.1, answered until the next release (README, MCP)
        "status": search.status,
        "ended_because": search.ended_because,
        "result": None if search.is_active else search.result,
        "user_question": question.pk if question is not None else None,
        "spent": SearchSpentSerializer(search).data,
    }
    if search.is_active:
        outcome["poll"] = f"Not ended yet: call memory_search_get with search_id {search.pk}."
    return outcome


def search_run(principal: Principal, args: SearchArgs) -> dict[str, Any]:
    space = principal.space
    search = services.search_start(
        by=principal,
        questions=args.questions,
        context=args.context,
        start_node=node_of(principal, args.start) if args.start is not None else None,
        output=args.output,
        fallback=args.fallback,
        **(args.budgets.model_dump(exclude_none=True) if args.budgets is not None else {}),
    )
    search = selectors.search_get(space=space, search_id=search.pk)
    return search_outcome(selectors.search_wait(search=search, seconds=args.wait_s))


def search_get_run(principal: Principal, args: SearchGetArgs) -> dict[str, Any]:
    search = selectors.search_get(space=principal.space, search_id=args.search_id)
    return search_outcome(selectors.search_wait(search=search, seconds=args.wait_s))


TOOLS = [
    Tool(
        name="memory_search",
        description="Ask memory questions: an LLM walks the tree and answers, citing the nodes and character "
        "ranges it read. Waits up to wait_s seconds; a search still running gives its id to poll.",
        args=SearchArgs,
        run=search_run,
        writes=True,
    ),
    Tool(
        name="memory_search_get",
        description="A search started by memory_search: its answers and citations once it has ended, waiting up "
        "to wait_s seconds for that, else its status.",
        args=SearchGetArgs,
        run=search_get_run,
        writes=False,
    ),
]
