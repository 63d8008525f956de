"""Reads of searches, their steps and the questions they put to the user, and the wait for a
search to end (`?wait=` of the API, `wait_s` of the tools)."""

from collections.abc import Iterable
from time import monotonic, sleep

from django.db.models import QuerySet

from memory.models import Node, Search, SearchQuestion, SearchStep
from memory.selectors.nodes import node_paths
from memsite.errors import NotFound
from memsite.limits import wait_slots
from memsite.spaces.models import Space
from memsite.spaces.principals import Principal

MAX_WAIT_S = 30
# How often a wait re-reads the search: a step takes an LLM call (a second or more), so a fifth
# of a second adds little latency and few queries.
POLL_INTERVAL_S = 0.2


def searches_in_flight(*, by: Principal) -> int:
    """The top-level searches `by`'s user asked for, queued or running in its space (their
    sub-searches are part of them): what a member's search cap counts."""
    return Search.objects.filter(
        created_by_id=by.user_id,
        space=by.space,
        parent__isnull=True,
        status__in=(Search.Status.QUEUED, Search.Status.RUNNING),
    ).count()


def search_get(*, space: Space, search_id: int) -> Search:
    """The search with this id in the space: one of another space is as missing as none."""
    try:
        return Search.objects.select_related("start_node", "created_by", "space").get(pk=search_id, space=space)
    except (Search.DoesNotExist, ValueError, TypeError):
        raise NotFound(f"No search with id {search_id!r}.") from None


def search_list(*, space: Space) -> QuerySet[Search]:
    """The space's searches started by someone (not sub-searches), newest first."""
    return Search.objects.filter(space=space, parent__isnull=True).select_related("created_by")


def search_children(*, search: Search) -> QuerySet[Search]:
    """The sub-searches a search started, in order."""
    return Search.objects.filter(parent=search).order_by("pk")


def search_node_names(*, search: Search) -> dict[str, str]:
    """Names of the nodes a search's walk is on or has marked (its trace shows them)."""
    state = search.state or {}
    ids = {*state.get("trail", ()), *state.get("visited", ()), *state.get("unviable", ())}
    return dict(Node.objects.filter(pk__in=ids, space_id=search.space_id).values_list("pk", "name"))


def search_node_paths(*, search: Search, node_ids: Iterable[str]) -> dict[str, str]:
    """Readable paths of the nodes of the search's space with these ids (its answers cite them),
    in two queries however many there are; a node deleted since is left out."""
    nodes = Node.objects.filter(pk__in=set(node_ids), space_id=search.space_id).only("id", "path", "name")
    return node_paths(nodes=nodes)


def search_steps(*, search: Search, after: int | None = None, with_text: bool = False) -> QuerySet[SearchStep]:
    """A search's steps in order, each with its LLM call's spend. What the call was shown and
    replied (and any error text) can run to many kilobytes a call, over up to a thousand calls:
    loaded only `with_text`, for a step the reader opens."""
    steps = SearchStep.objects.filter(search=search).select_related("llm_call")
    if not with_text:
        steps = steps.defer("llm_call__messages", "llm_call__reply", "llm_call__error")
    return steps.filter(number__gt=after) if after is not None else steps


def search_question_get(*, space: Space, question_id: int) -> SearchQuestion:
    """A question of one of the space's searches."""
    try:
        return SearchQuestion.objects.select_related("search").get(pk=question_id, search__space=space)
    except (SearchQuestion.DoesNotExist, ValueError, TypeError):
        raise NotFound(f"No question with id {question_id!r}.") from None


def search_question_of(*, search: Search) -> SearchQuestion | None:
    """The question the search put to the user, whether it waits, was answered or was closed."""
    return SearchQuestion.objects.filter(search=search).select_related("answered_by").first()


def search_question_pending(*, search: Search) -> SearchQuestion | None:
    """The question the search waits on the user for, if it does."""
    return SearchQuestion.objects.filter(search=search, status=SearchQuestion.Status.PENDING).first()


def search_questions_pending(*, space: Space) -> QuerySet[SearchQuestion]:
    """The space's questions waiting for the user, newest first, with their search (its
    context is shown)."""
    pending = SearchQuestion.objects.filter(status=SearchQuestion.Status.PENDING, search__space=space)
    return pending.select_related("search")


def search_wait(*, search: Search, seconds: int) -> Search:
    """The search as soon as it has ended, or as it stands after `seconds`, or at once when no
    slot for waiting is free. Re-read from the database: a worker process, not this one, writes it."""
    if not seconds:
        return search
    with wait_slots().hold() as free:
        return _polled(search, seconds) if free else search


def _polled(search: Search, seconds: int) -> Search:
    deadline = monotonic() + seconds
    while search.is_active and monotonic() < deadline:
        sleep(min(POLL_INTERVAL_S, max(deadline - monotonic(), 0)))
        search = search_get(space=search.space, search_id=search.pk)
    return search
