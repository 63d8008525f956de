"""What each ledger row served, with a link to that object's dashboard page where it has one.
The apps say which of their models calls serve and which page shows them (memsite knows none
of their models): one query per model among the rows, whatever their number."""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.contenttypes.models import ContentType
from django.urls import reverse

from memsite.llm.models import LLMCall


@dataclass(frozen=True)
class ServedPage:
    label: str  # what the object is, for a reader: "search", "tick"...
    url_name: str  # the page, whose one argument is...
    via: str  # ...this field of the object ("pk", or the id of the row whose page it is)


@dataclass(frozen=True)
class Served:
    label: str
    served_id: int
    url: str = ""  # none when the object is gone or has no page


_pages: dict[tuple[str, str], ServedPage] = {}


def register_served_page(model_label: str, page: ServedPage) -> None:
    """`model_label` ("memory.search") is shown on `page` (an app's, at its ready())."""
    app_label, model = model_label.lower().split(".")
    _pages[app_label, model] = page


def _urls(content_type: ContentType, page: ServedPage, ids: set[int]) -> dict[int, str]:
    model = content_type.model_class()
    if model is None:
        return {}
    rows = model._default_manager.filter(pk__in=ids).order_by().values_list("pk", page.via)
    return {served_id: reverse(page.url_name, args=[target]) for served_id, target in rows}


def _labelled_urls(type_id: int, served_ids: set[int]) -> tuple[str, dict[int, str]]:
    content_type = ContentType.objects.get_for_id(type_id)
    page = _pages.get((content_type.app_label, content_type.model))
    if page is None:
        return f"{content_type.app_label}.{content_type.model}", {}
    return page.label, _urls(content_type, page, served_ids)


def llm_calls_served(*, calls: Iterable[LLMCall]) -> dict[int, Served]:
    """By call id, what each call (of those that served something) was for."""
    serving = [(call.pk, call.served_type_id, call.served_id) for call in calls if call.served_type_id is not None]
    ids: dict[int, set[int]] = defaultdict(set)
    for _, type_id, served_id in serving:
        ids[type_id].add(served_id)  # type: ignore[arg-type]
    pages = {type_id: _labelled_urls(type_id, served_ids) for type_id, served_ids in ids.items()}
    return {
        call_id: Served(label=pages[type_id][0], served_id=served_id, url=pages[type_id][1].get(served_id, ""))  # type: ignore[arg-type]
        for call_id, type_id, served_id in serving
    }
