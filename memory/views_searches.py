"""The dashboard of searches: the list and a form to start one, the live trace of a search, and
the questions searches put to the user, as small htmx views.
Explained in docs/memory.md."""

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HTMX_STOP_POLLING

from memory import selectors, services
from memory.logic.durations import duration_text
from memory.models import Node, Search, SearchQuestion, SearchStep
from memory.rendering import markdown_to_html
from memory.search.walk import MAX_CANDIDATES_SHOWN
from memory.views_curation import FOLDER_CHOICES, Picker, folder_picker
from memsite.errors import ServiceError
from memsite.llm.selectors import llm_provider_serving
from memsite.pages import form_error, render_page
from memsite.request_types import HtmxHttpRequest
from memsite.spaces.principals import principal_of

SEARCHES = "memory/searches.html"
TRACE = "memory/search_detail.html"
QUESTIONS = "memory/questions.html"
PAGE_SIZE = 50
QUESTIONS_SHOWN = 100
NODE_ID = re.compile(r"^[\w-]{1,64}$")


# -- forms (they check the shape of the input; search_start checks the rules) ------------------


class SearchStartForm(forms.Form):
    questions = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), help_text="One question per line.")
    context = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    start_node = forms.CharField(required=False, max_length=64, label="Start in")
    output = forms.ChoiceField(choices=Search.Output.choices, initial=Search.Output.ANSWER)
    fallback = forms.ChoiceField(choices=Search.Fallback.choices, initial=Search.Fallback.NONE)

    def clean_questions(self) -> list[str]:
        return [line.strip() for line in self.cleaned_data["questions"].splitlines() if line.strip()]


class QuestionAnswerForm(forms.Form):
    answer = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}))
    # Where the answer was given: the questions page, or the trace of the search that asked.
    back_to = forms.ChoiceField(choices=[("questions", "questions"), ("search", "search")], required=False)


# -- helpers -----------------------------------------------------------------------------------


def _search_or_404(request: HtmxHttpRequest, search_id: int) -> Search:
    try:
        return selectors.search_get(space=principal_of(request).space, search_id=search_id)
    except ServiceError as error:
        raise Http404(error.message) from None


@dataclass(frozen=True)
class TrailNode:
    id: str
    name: str  # empty when the node has been deleted since


@dataclass(frozen=True)
class Trail:
    """Where the walk is: the nodes from the start down to the current one, and those it has
    been through or ruled out."""

    start: Node | None
    path: list[TrailNode]
    visited: list[TrailNode]
    unviable: list[TrailNode]


def _trail(search: Search) -> Trail:
    state = search.state or {}
    path, visited, unviable = (list(state.get(key) or []) for key in ("trail", "visited", "unviable"))
    names = selectors.search_node_names(search=search)  # a node deleted since keeps its id

    def nodes(ids: list[str]) -> list[TrailNode]:
        return [TrailNode(id=node_id, name=names.get(node_id, "")) for node_id in ids]

    return Trail(start=search.start_node, path=nodes(path), visited=nodes(visited), unviable=nodes(unviable))


@dataclass(frozen=True)
class Cited:
    id: str
    path: str  # empty when the node has been deleted since


@dataclass(frozen=True)
class ResultAnswer:
    """An answer of the result, as `result["answers"]` keeps it, ready to show."""

    question: str
    html: SafeString  # the answer's markdown, rendered and sanitized; empty for no answer
    complete: bool
    cited: list[Cited]
    by_user: bool  # the user's answer to the question the search put to them


def _strings(value: object) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else []


def _result_answers(search: Search, question: SearchQuestion | None) -> list[ResultAnswer]:
    """The result's answers with the paths of the nodes they cite, read together; an entry of
    another shape is left out rather than failing the trace."""
    entries = [entry for entry in (search.result or {}).get("answers") or [] if isinstance(entry, dict)]
    paths = selectors.search_node_paths(
        search=search, node_ids=[node_id for entry in entries for node_id in _strings(entry.get("node_ids"))]
    )
    # The service writes the user's answer, as they gave it, into every entry left incomplete.
    users_answer = question.answer if question and question.status == SearchQuestion.Status.ANSWERED else None
    answers = []
    for entry in entries:
        text = str(entry.get("answer") or "")
        answers.append(
            ResultAnswer(
                question=str(entry.get("question") or ""),
                html=markdown_to_html(text) if text else SafeString(""),
                complete=bool(entry.get("complete")),
                cited=[Cited(node_id, paths.get(node_id, "")) for node_id in _strings(entry.get("node_ids"))],
                by_user=users_answer is not None and text == users_answer,
            )
        )
    return answers


@dataclass(frozen=True)
class Candidate:
    """An option a routing step saw, as the walk recorded it in `detail["candidates"]`."""

    node: str
    name: str
    score: float | None
    snippet: str

    @property
    def linkable(self) -> bool:
        return bool(NODE_ID.match(self.node))


@dataclass(frozen=True)
class TraceStep:
    step: SearchStep
    detail_json: str
    child_id: int | None  # the sub-search a `subsearch` or `handback` step is about
    candidates: list[Candidate]


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _candidates(detail: dict) -> list[Candidate]:
    """The step's candidates, best first; an entry of another shape is left out rather than
    failing the trace (the detail is free-form JSON)."""
    entries = detail.get("candidates")
    if not isinstance(entries, list):
        return []
    return [
        Candidate(
            node=str(entry.get("node") or ""),
            name=str(entry.get("name") or ""),
            score=_number(entry.get("score")),
            snippet=str(entry.get("snippet") or ""),
        )
        for entry in entries[:MAX_CANDIDATES_SHOWN]
        if isinstance(entry, dict)
    ]


def _trace_step(step: SearchStep) -> TraceStep:
    detail = step.detail if isinstance(step.detail, dict) else {}
    child = detail.get("child")
    candidates = _candidates(detail)
    # Shown as a table, the candidates are left out of the raw detail below it.
    shown = {key: value for key, value in detail.items() if key != "candidates"} if candidates else step.detail
    return TraceStep(
        step=step,
        detail_json=json.dumps(shown, indent=2, ensure_ascii=False, sort_keys=True) if shown else "",
        child_id=child if isinstance(child, int) and not isinstance(child, bool) else None,
        candidates=candidates,
    )


def _trace_steps(search: Search, *, after: int = 0) -> list[TraceStep]:
    return [_trace_step(step) for step in selectors.search_steps(search=search, after=after or None)]


def _trace_context(search: Search, *, after: int, steps: list[TraceStep]) -> dict[str, Any]:
    """What the trace's header shows. `after` is the last step number on the page once these
    steps are added; the next poll asks for the steps after it."""
    after = max([after, *(item.step.number for item in steps)])
    question = selectors.search_question_of(search=search)
    answers = _result_answers(search, question) if search.result else []
    began = search.started_at or search.created_at
    return {
        "search": search,
        "steps": steps,
        "after": after,
        # Ended with every step shown: nothing will change any more.
        "settled": not search.is_active and after >= search.steps_taken,
        "trail": _trail(search),
        "children": list(selectors.search_children(search=search)),
        "question": question,
        "pending_question": question if question and question.status == SearchQuestion.Status.PENDING else None,
        "answers": answers,
        "took": duration_text(search.finished_at - began) if search.finished_at else "",
        # Whether heuristics wrote the result: asked once there is one, unless it is all the user's.
        "provider": (
            llm_provider_serving(model=Search, served_id=search.pk)
            if search.result and not (answers and all(answer.by_user for answer in answers))
            else None
        ),
    }


def _after(request: HtmxHttpRequest) -> int:
    raw = request.GET.get("after") or request.POST.get("after") or "0"
    return int(raw) if raw.isascii() and raw.isdigit() else 0


# -- searches ----------------------------------------------------------------------------------


def _start_picker(request: HtmxHttpRequest, data: Mapping[str, str]) -> tuple[Picker, int]:
    return folder_picker(request, data, field="start_node", legend="Or start in")


def _list_page(
    request: HtmxHttpRequest, form: SearchStartForm, *, picker: Picker | None = None, error: str = "", status: int = 200
) -> HttpResponse:
    page = Paginator(selectors.search_list(space=principal_of(request).space), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    # A start refused keeps the folder chosen, found again by its id.
    picker = picker or _start_picker(request, {"q": str(form.data.get("start_node") or "")})[0]
    context = {"page": page, "form": form, "picker": picker, "error": error}
    return render_page(request, SEARCHES, context, status=status)


@require_GET
@login_required
def search_list(request: HtmxHttpRequest) -> HttpResponse:
    return _list_page(request, SearchStartForm())


@require_GET
@login_required
def search_start_folders(request: HtmxHttpRequest) -> HttpResponse:
    """The folders a search can start in, by name, for the start form's picker."""
    picker, status = _start_picker(request, request.GET)
    if request.htmx:
        return render_page(request, FOLDER_CHOICES, {"picker": picker}, status=status)
    return _list_page(request, SearchStartForm(), picker=picker, status=status)


@require_POST
@login_required
def search_start(request: HtmxHttpRequest) -> HttpResponse:
    form = SearchStartForm(request.POST)
    if not form.is_valid():
        return _list_page(request, form, error=form_error(form), status=400)
    data = form.cleaned_data
    principal = principal_of(request)
    try:
        start_node = (
            selectors.node_get(space=principal.space, node_id=data["start_node"]) if data["start_node"] else None
        )
        search = services.search_start(
            by=principal,
            questions=data["questions"],
            context=data["context"],
            start_node=start_node,
            output=data["output"],
            fallback=data["fallback"],
        )
    except ServiceError as error:
        return _list_page(request, form, error=error.message, status=error.status)
    messages.success(request, f"Search {search.pk} started.")
    return redirect("memory:search_detail", search_id=search.pk)


@require_GET
@login_required
def search_detail(request: HtmxHttpRequest, search_id: int) -> HttpResponse:
    search = _search_or_404(request, search_id)
    if request.htmx and not request.htmx.history_restore_request:
        after = _after(request)
        context = _trace_context(search, after=after, steps=_trace_steps(search, after=after))
        status = HTMX_STOP_POLLING if context["settled"] else 200
        return render_page(request, f"{TRACE}#trace_update", context, status=status)
    return render_page(request, TRACE, _trace_context(search, after=0, steps=_trace_steps(search)))


@require_GET
@login_required
def search_step_call(request: HtmxHttpRequest, search_id: int, number: int) -> HttpResponse:
    """What a step's LLM call was shown and replied, fetched when the step is first opened."""
    search = _search_or_404(request, search_id)
    step = selectors.search_steps(search=search, with_text=True).filter(number=number).first()
    if step is None or step.llm_call_id is None:
        raise Http404(f"Step {number} of search {search.pk} made no LLM call.")
    return render_page(request, f"{TRACE}#step_call", {"call": step.llm_call})


@require_POST
@login_required
def search_cancel(request: HtmxHttpRequest, search_id: int) -> HttpResponse:
    search = _search_or_404(request, search_id)
    status, message, error = 200, "", ""
    try:
        cancelled = services.search_cancel(search=search, user=request.user)
        # A running search stops at its worker's next step; any other ends at once.
        message = "Cancelling: the search stops at its next step." if cancelled.is_active else "Cancelled."
    except ServiceError as error_:
        status, error = error_.status, error_.message
    if not request.htmx:
        (messages.error if error else messages.success)(request, error or message)
        return redirect("memory:search_detail", search_id=search.pk)
    # Only the header: the steps since `after` come with the next poll, which the header keeps
    # asking for until they are all on the page.
    search = selectors.search_get(space=search.space, search_id=search.pk)
    context = {**_trace_context(search, after=_after(request), steps=[]), "message": message, "error": error}
    return render_page(request, f"{TRACE}#trace", context, status=status)


# -- the user's questions ----------------------------------------------------------------------


def _questions_page(request: HtmxHttpRequest, *, error: str = "", status: int = 200) -> HttpResponse:
    # The newest only: a page of every question ever left unanswered would grow without end.
    pending = selectors.search_questions_pending(space=principal_of(request).space)
    questions = list(pending[: QUESTIONS_SHOWN + 1])
    more = len(questions) > QUESTIONS_SHOWN
    context = {
        "questions": questions[:QUESTIONS_SHOWN],
        "pending_count": pending.count() if more else len(questions),
        "more": more,
        "error": error,
    }
    return render_page(request, QUESTIONS, context, status=status)


@require_GET
@login_required
def question_list(request: HtmxHttpRequest) -> HttpResponse:
    return _questions_page(request)


@require_POST
@login_required
def question_answer(request: HtmxHttpRequest, question_id: int) -> HttpResponse:
    form = QuestionAnswerForm(request.POST)
    try:
        principal = principal_of(request)
        question = selectors.search_question_get(space=principal.space, question_id=question_id)
        if not form.is_valid():
            return _questions_page(request, error=form_error(form), status=400)
        question = services.search_question_answer(question=question, answer=form.cleaned_data["answer"], by=principal)
    except ServiceError as error:
        return _questions_page(request, error=error.message, status=error.status)
    messages.success(request, f"Answered; search {question.search_id} is complete.")
    if form.cleaned_data["back_to"] == "search":
        return redirect("memory:search_detail", search_id=question.search_id)
    return redirect("memory:question_list")
