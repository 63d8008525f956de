"""Every URL of the site, as a table: who may call it (the API, the dashboard's pages, the
admin, or anyone), the methods it accepts, and for each method a call that succeeds for an
allowed caller, with the status that call answers. The authorization, CSRF and size-limit tests
all read it; `test_every_url_is_in_the_table` fails when a URL is added without a row here.

Admin URLs are not listed one by one: every URL under /admin/ follows the admin's rule (staff
only, by session), and its object ids come from the world by the model the URL names."""

import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.apps import apps
from django.contrib import admin
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from agents.brains.services.brains_json import brain_export
from agents.context.forms import settings_initial
from agents.context.models import Agent
from memsite.spaces.logic import Role, role_needed
from memsite.spaces.selectors import token_by_key
from tests.archives import tar_gz
from tests.security.world import World

API, PAGE, PUBLIC = "api", "page", "public"
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
HTMX = {"HTTP_HX_REQUEST": "true"}


@dataclass(frozen=True)
class Call:
    """One request an allowed caller makes, and the status it answers with."""

    status: int | frozenset[int]
    json: Callable[[World], Any] | None = None  # an API body, sent as JSON
    form: Callable[[World], dict] | None = None  # a page's form, sent as multipart
    raw: Callable[[World], bytes] | None = None  # a raw body (a PUT of content)
    query: str = ""
    htmx: bool = False  # a partial that only htmx asks for
    role: Role | None = None  # the role its view declares (`required_role`), if not what the method needs
    sessions_only: bool = False  # refused to any token (403), whatever its role: making a space
    # It manages the space, as what needs an owner does: a token needs the owner role and the
    # manage scope (a member's session manages their own tokens).
    manages: bool = False

    def allows(self, status: int) -> bool:
        return status in self.status if isinstance(self.status, frozenset) else status == self.status

    def manages_through_token(self, method: str) -> bool:
        """Whether a token needs the owner role and the manage scope for it."""
        return self.manages or role_needed(method, self.role) == Role.OWNER


@dataclass(frozen=True)
class Route:
    kind: str
    calls: dict[str, Call]
    kwargs: Callable[[World], dict] = lambda world: {}
    reason: str = ""  # why a public URL is public


def api(kwargs: Callable[[World], dict] = lambda world: {}, **calls: Call) -> Route:
    """An API route; a GET also answers HEAD, as every DRF view does."""
    methods = {method.upper(): call for method, call in calls.items()}
    if "GET" in methods:
        methods["HEAD"] = methods["GET"]
    return Route(kind=API, calls=methods, kwargs=kwargs)


def page(kwargs: Callable[[World], dict] = lambda world: {}, **calls: Call) -> Route:
    return Route(kind=PAGE, calls={method.upper(): call for method, call in calls.items()}, kwargs=kwargs)


GUESSES = itertools.count()


def ok(status: int = 200, **options: Any) -> Call:
    return Call(status=status, **options)


def agent(world: World) -> dict:
    return {"agent_id": world.agent.pk}


def agent_settings(world: World) -> dict:
    """The agent's settings form as its page fills it: every setting, and when they were read."""
    values = settings_initial(Agent.objects.get(pk=world.agent.pk))
    return {name: "" if value is None else value for name, value in values.items()}


def graph(world: World) -> dict:
    return {"graph_id": world.graph.pk}


def node(attribute: str) -> Callable[[World], dict]:
    return lambda world: {"node_id": getattr(world, attribute).pk}


def document_version(world: World) -> dict:
    """The document's first version: restoring it, while it is the version now, writes nothing."""
    return {"node_id": world.document.pk, "version": 1}


def space(world: World) -> dict:
    return {"slug": "default"}


def search(world: World) -> dict:
    return {"search_id": world.search.pk}


def archive(world: World) -> dict:
    return {"archive": SimpleUploadedFile("p.tar.gz", tar_gz({"docs/readme.md": b"# readme\n"}))}


def memory_json(world: World) -> bytes:
    return json.dumps(brain_export(agent=world.agent)).encode()


def snapshot(world: World) -> bytes:
    return json.dumps(
        {
            "nodes": {"1": {"node_id": 1, "kind": "task", "thought": "T", "related_turn_ids": [], "active": True}},
            "edges": [],
        }
    ).encode()


BRAIN_COLLECTIONS = (
    "thoughts", "inner-thoughts", "episodes", "facts", "self-instructions", "logs",
    "explored-paths", "explored-urls", "neurons", "synapses", "ticks",
)  # fmt: skip
POLLING = frozenset({200, 286})  # a live partial answers 286 once it stops polling

ROUTES: dict[str, Route] = {
    # -- public -------------------------------------------------------------------------------
    "healthz": Route(
        kind=PUBLIC,
        calls={"GET": ok(frozenset({200, 503}))},
        reason="a load balancer's liveness probe: no login, and it shows only whether the backends answer",
    ),
    "favicon.ico": Route(
        kind=PUBLIC,
        calls={"GET": ok(301), "HEAD": ok(301)},
        reason="the site's icon, which browsers ask for at this path: a redirect to the static SVG",
    ),
    "login/": Route(
        kind=PUBLIC,
        calls={
            "GET": ok(),
            "HEAD": ok(),
            # A username of its own each time: one address's wrong passwords for one username
            # are soon made to wait (memsite/login.py).
            "POST": ok(form=lambda w: {"username": f"nobody-{next(GUESSES)}", "password": "wrong"}),
            "PUT": ok(),
        },
        reason="the login form",
    ),
    "logout/": Route(kind=PUBLIC, calls={"POST": ok(302)}, reason="logging out asks for no login"),
    "api/schema/": Route(
        kind=PUBLIC,
        calls={"GET": ok(), "HEAD": ok()},
        reason="the OpenAPI description of the API: no memory, no users; swarm nodes' clients load it",
    ),
    "api/docs/": Route(
        kind=PUBLIC, calls={"GET": ok(), "HEAD": ok()}, reason="the page that shows the OpenAPI description"
    ),
    # -- the API: agents ------------------------------------------------------------------------
    "api/agents/": api(post=ok(201, json=lambda w: {"name": "new agent", "model": "gpt-4"})),
    "api/agents/<int:agent_id>/": api(agent, get=ok(), patch=ok(json=lambda w: {"instructions": "Be brief."})),
    "api/agents/<int:agent_id>/messages/": api(
        agent, get=ok(), post=ok(201, json=lambda w: {"role": "user", "content": "Hi."})
    ),
    "api/agents/<int:agent_id>/context/": api(agent, get=ok()),
    "api/agents/<int:agent_id>/checkpoints/": api(agent, post=ok(201, json=lambda w: {})),
    "api/agents/<int:agent_id>/checkpoints/<int:checkpoint_id>/restore/": api(
        lambda w: {"agent_id": w.agent.pk, "checkpoint_id": w.checkpoint.pk}, post=ok(json=lambda w: {})
    ),
    "api/agents/<int:agent_id>/brain/": api(agent, get=ok()),
    **{f"api/agents/<int:agent_id>/brain/{name}/": api(agent, get=ok()) for name in BRAIN_COLLECTIONS},
    "api/agents/<int:agent_id>/tick/": api(agent, post=ok(202, json=lambda w: {})),
    "api/agents/<int:agent_id>/ticking/start/": api(agent, post=ok(json=lambda w: {"interval_s": 60})),
    "api/agents/<int:agent_id>/ticking/pause/": api(agent, post=ok(json=lambda w: {})),
    "api/agents/<int:agent_id>/chat/": api(agent, post=ok(201, json=lambda w: {"text": "Hello."})),
    "api/agents/<int:agent_id>/goals/": api(agent, post=ok(201, json=lambda w: {"text": "Read the notes."})),
    "api/agents/<int:agent_id>/goals/<int:goal_id>/complete/": api(
        lambda w: {"agent_id": w.agent.pk, "goal_id": w.goal.pk}, post=ok(json=lambda w: {})
    ),
    "api/agents/<int:agent_id>/memory.json": api(agent, get=ok(), put=ok(raw=memory_json)),
    # -- the API: reasoning graphs ----------------------------------------------------------------
    "api/graphs/": api(post=ok(201, json=lambda w: {"task": "Find the port."})),
    "api/graphs/<int:graph_id>/": api(graph, get=ok()),
    "api/graphs/<int:graph_id>/memorize/": api(
        graph, post=ok(202, json=lambda w: {"messages": [{"role": "assistant", "content": "I look."}]})
    ),
    "api/graphs/<int:graph_id>/recall/": api(graph, post=ok(202, json=lambda w: {})),
    "api/graphs/<int:graph_id>/context/": api(graph, get=ok()),
    "api/graphs/<int:graph_id>/nodes/": api(graph, get=ok()),
    "api/graphs/<int:graph_id>/nodes/<int:node_id>/": api(
        lambda w: {"graph_id": w.graph.pk, "node_id": w.graph_node_id}, get=ok()
    ),
    "api/graphs/<int:graph_id>/leaves/": api(graph, get=ok()),
    "api/graphs/<int:graph_id>/ops/": api(graph, get=ok()),
    "api/graphs/<int:graph_id>/snapshot/": api(graph, get=ok(), put=ok(raw=snapshot)),
    # -- the API: the memory tree ---------------------------------------------------------------
    "api/nodes/": api(
        post=ok(201, json=lambda w: {"parent": w.folder.pk, "type": "document", "name": "new.md", "content": "x"})
    ),
    "api/nodes/roots/": api(get=ok()),
    "api/nodes/resolve/": api(get=ok(query="?path=/user")),
    "api/nodes/<str:node_id>/": api(
        node("document"), get=ok(), patch=ok(json=lambda w: {"description": "Changed."}), delete=ok(204)
    ),
    "api/nodes/<str:node_id>/children/": api(node("folder"), get=ok()),
    "api/nodes/<str:node_id>/ancestors/": api(node("document"), get=ok()),
    "api/nodes/<str:node_id>/history/": api(node("document"), get=ok()),
    "api/nodes/<str:node_id>/history/<int:version>/": api(document_version, get=ok()),
    "api/nodes/<str:node_id>/history/<int:version>/restore/": api(
        document_version, post=ok(json=lambda w: {"version": w.document.version})
    ),
    "api/nodes/<str:node_id>/move/": api(node("document"), post=ok(json=lambda w: {"parent": w.destination.pk})),
    "api/nodes/<str:node_id>/content/": api(node("document"), get=ok(), put=ok(raw=lambda w: b"# New text\n")),
    "api/nodes/<str:node_id>/export/": api(node("project"), get=ok()),
    "api/nodes/<str:node_id>/import/": api(node("project"), post=ok(201, form=archive)),
    # -- the API: searches ----------------------------------------------------------------------
    "api/retrieve/": api(post=ok(json=lambda w: {"query": "plan"}, role=Role.READER)),
    "api/searches/": api(post=ok(202, json=lambda w: {"questions": ["Where is the plan?"]})),
    "api/searches/<int:search_id>/": api(search, get=ok()),
    "api/searches/<int:search_id>/steps/": api(search, get=ok()),
    "api/searches/<int:search_id>/cancel/": api(
        lambda w: {"search_id": w.question.search_id}, post=ok(202, json=lambda w: {})
    ),
    "api/usage/": api(get=ok()),
    # -- the API: tools -----------------------------------------------------------------------------
    "api/tools/openai.json": api(get=ok()),
    # A tool that reads is a reader's call; the registry refuses readers the tools that write.
    "api/tools/call/": api(
        post=ok(json=lambda w: {"name": "memory_read", "arguments": {"node": w.document.pk}}, role=Role.READER)
    ),
    # -- the API: spaces, members and tokens ---------------------------------------------------------
    "api/spaces/": api(
        get=ok(),
        post=ok(201, json=lambda w: {"slug": "made", "name": "Made"}, role=Role.READER, sessions_only=True),
    ),
    "api/spaces/<slug:slug>/": api(
        space,
        get=ok(),
        patch=ok(json=lambda w: {"quota_searches": 1}, role=Role.OWNER),
        # The default space stays; tests/spaces deletes others.
        delete=ok(409, json=lambda w: {"confirm": "default"}, role=Role.OWNER),
    ),
    "api/spaces/<slug:slug>/members/": api(space, get=ok()),
    "api/spaces/<slug:slug>/members/<str:username>/": api(
        lambda w: {"slug": "default", "username": w.user.username},
        put=ok(json=lambda w: {"role": "reader"}, role=Role.OWNER),
        delete=ok(204, role=Role.OWNER),
    ),
    "api/spaces/<slug:slug>/tokens/": api(
        space, get=ok(), post=ok(201, json=lambda w: {"name": "swarm node b"}, role=Role.READER, manages=True)
    ),
    "api/spaces/<slug:slug>/tokens/<int:token_id>/": api(
        lambda w: {"slug": "default", "token_id": token_by_key(key=w.user_token).pk},
        patch=ok(json=lambda w: {"llm_daily_calls": 5}, role=Role.READER, manages=True),
        delete=ok(role=Role.READER, manages=True),
    ),
    "api/questions/": api(get=ok()),
    "api/questions/<int:question_id>/answer/": api(
        lambda w: {"question_id": w.question.pk}, post=ok(json=lambda w: {"answer": "Dark mode."})
    ),
    # -- pages ------------------------------------------------------------------------------------
    "": page(get=ok()),
    "llm/": page(get=ok()),
    "llm/calls/<int:call_id>/": page(lambda w: {"call_id": w.llm_call.pk}, get=ok()),
    "agents/": page(get=ok()),
    "agents/create/": page(post=ok(302, form=lambda w: {"name": "new agent", "model": "gpt-4"})),
    "agents/<int:agent_id>/": page(agent, get=ok()),
    "agents/<int:agent_id>/edit/": page(agent, get=ok(role=Role.EDITOR), post=ok(302, form=agent_settings)),
    "agents/<int:agent_id>/delete/": page(agent, get=ok(role=Role.EDITOR), post=ok(302, form=lambda w: {})),
    "agents/<int:agent_id>/checkpoints/": page(agent, post=ok(302, form=lambda w: {})),
    "agents/<int:agent_id>/checkpoints/<int:checkpoint_id>/restore/": page(
        lambda w: {"agent_id": w.agent.pk, "checkpoint_id": w.checkpoint.pk},
        get=ok(role=Role.EDITOR),
        post=ok(302, form=lambda w: {}),
    ),
    "agents/<int:agent_id>/context/": page(agent, get=ok(htmx=True)),
    "agents/<int:agent_id>/messages/": page(agent, get=ok(htmx=True)),
    "agents/<int:agent_id>/messages/append/": page(
        agent, post=ok(302, form=lambda w: {"role": "user", "content": "Hi."})
    ),
    "agents/<int:agent_id>/brain/": page(agent, get=ok()),
    "agents/<int:agent_id>/brain/stream/": page(agent, get=ok(POLLING, htmx=True)),
    "agents/<int:agent_id>/brain/tick/": page(agent, post=ok(302, form=lambda w: {})),
    "agents/<int:agent_id>/brain/ticking/start/": page(agent, post=ok(302, form=lambda w: {"interval_s": 60})),
    "agents/<int:agent_id>/brain/ticking/pause/": page(agent, post=ok(302, form=lambda w: {})),
    "agents/<int:agent_id>/brain/goals/": page(agent, post=ok(302, form=lambda w: {"text": "Read the notes."})),
    "agents/<int:agent_id>/brain/goals/<int:goal_id>/complete/": page(
        lambda w: {"agent_id": w.agent.pk, "goal_id": w.goal.pk}, post=ok(302, form=lambda w: {})
    ),
    "agents/<int:agent_id>/brain/chat/": page(agent, post=ok(302, form=lambda w: {"text": "Hello."})),
    "graphs/": page(get=ok()),
    "graphs/create/": page(post=ok(302, form=lambda w: {"task": "Find the port."})),
    "graphs/<int:graph_id>/": page(graph, get=ok()),
    "graphs/<int:graph_id>/live/": page(graph, get=ok(POLLING, htmx=True)),
    "graphs/<int:graph_id>/nodes/<int:node_id>/": page(
        lambda w: {"graph_id": w.graph.pk, "node_id": w.graph_node_id}, get=ok(htmx=True)
    ),
    "graphs/<int:graph_id>/recall/": page(graph, post=ok(302, form=lambda w: {})),
    "graphs/<int:graph_id>/memorize/": page(
        graph, post=ok(302, form=lambda w: {"role_0": "assistant", "content_0": "I look."})
    ),
    "memory/": page(get=ok()),
    "memory/find/": page(get=ok(query="?q=plan", htmx=True)),
    "memory/<str:node_id>/": page(node("document"), get=ok()),
    "memory/<str:node_id>/children/": page(node("folder"), get=ok(htmx=True)),
    "memory/<str:node_id>/create/": page(
        node("folder"), post=ok(302, form=lambda w: {"type": "folder", "name": "new"})
    ),
    "memory/<str:node_id>/update/": page(
        node("document"), post=ok(302, form=lambda w: {"version": w.document.version, "description": "Changed."})
    ),
    "memory/<str:node_id>/delete/": page(node("document"), post=ok(302, form=lambda w: {})),
    "memory/<str:node_id>/content/": page(
        node("document"), post=ok(302, form=lambda w: {"version": w.document.version, "content": "# New\n"})
    ),
    "memory/<str:node_id>/edit/": page(node("document"), get=ok(role=Role.EDITOR)),
    "memory/<str:node_id>/move/": page(node("document"), post=ok(302, form=lambda w: {"parent": w.destination.pk})),
    "memory/<str:node_id>/move/folders/": page(node("document"), get=ok(query="?q=arch", htmx=True)),
    "memory/<str:node_id>/history/": page(node("document"), get=ok()),
    "memory/<str:node_id>/history/<int:version>/": page(document_version, get=ok()),
    "memory/<str:node_id>/history/<int:version>/restore/": page(
        document_version, get=ok(role=Role.EDITOR), post=ok(302, form=lambda w: {"version": w.document.version})
    ),
    "memory/<str:node_id>/archive/upload/": page(node("project"), post=ok(302, form=archive)),
    "memory/<str:node_id>/archive.tar.gz": page(node("project"), get=ok()),
    "user/preferences/": page(get=ok()),
    "user/preferences/preview/": page(post=ok(form=lambda w: {"content": "# Preview"}, role=Role.READER)),
    "searches/": page(get=ok()),
    "searches/start/": page(
        post=ok(302, form=lambda w: {"questions": "Where is the plan?", "output": "answer", "fallback": "none"})
    ),
    "searches/start/folders/": page(get=ok(query="?q=arch", htmx=True)),
    "searches/<int:search_id>/": page(search, get=ok()),
    "searches/<int:search_id>/steps/<int:number>/call/": page(
        lambda w: {"search_id": w.search.pk, "number": w.step.number}, get=ok(htmx=True)
    ),
    "searches/<int:search_id>/cancel/": page(
        lambda w: {"search_id": w.question.search_id}, post=ok(302, form=lambda w: {})
    ),
    "spaces/": page(get=ok()),
    # Outside spaces: any logged-in user makes a space, a member of any switches to another.
    "spaces/create/": page(post=ok(302, form=lambda w: {"slug": "made", "name": "Made"}, role=Role.READER)),
    "spaces/switch/": page(post=ok(302, form=lambda w: {"slug": "default"}, role=Role.READER)),
    "spaces/<slug:slug>/members/": page(space, get=ok()),
    "spaces/<slug:slug>/members/set/": page(
        space, post=ok(302, form=lambda w: {"username": w.user.username, "role": "reader"}, role=Role.OWNER)
    ),
    "spaces/<slug:slug>/members/<str:username>/remove/": page(
        lambda w: {"slug": "default", "username": w.user.username}, post=ok(302, form=lambda w: {}, role=Role.OWNER)
    ),
    "spaces/<slug:slug>/tokens/": page(space, get=ok()),
    "spaces/<slug:slug>/tokens/create/": page(
        space, post=ok(form=lambda w: {"name": "swarm node b"}, role=Role.READER)
    ),
    "spaces/<slug:slug>/tokens/<int:token_id>/revoke/": page(
        lambda w: {"slug": "default", "token_id": token_by_key(key=w.user_token).pk},
        get=ok(),  # asks first
        post=ok(302, form=lambda w: {}, role=Role.READER),
    ),
    "spaces/<slug:slug>/settings/": page(space, get=ok(role=Role.OWNER)),
    "spaces/<slug:slug>/settings/update/": page(
        space, post=ok(302, form=lambda w: {"name": "Default", "quota_searches": "1"}, role=Role.OWNER)
    ),
    # The default space stays; tests/spaces/test_pages.py deletes others.
    "spaces/<slug:slug>/delete/": page(space, post=ok(409, form=lambda w: {"confirm": "default"}, role=Role.OWNER)),
    "questions/": page(get=ok()),
    "questions/<int:question_id>/answer/": page(
        lambda w: {"question_id": w.question.pk}, post=ok(302, form=lambda w: {"answer": "Dark mode."})
    ),
}


# -- the URL patterns of the site -----------------------------------------------------------------


@dataclass(frozen=True)
class Pattern:
    route: str  # the pattern, includes joined: "api/nodes/<str:node_id>/"
    name: str | None  # namespaced: "memory-api:node-detail"
    pattern: URLPattern = field(compare=False)


SKIPPED_PREFIXES = ("static/", "media/")


def site_patterns() -> Iterator[Pattern]:
    """Every URL pattern of the root URLconf, through every include."""

    def walk(resolver: URLResolver, prefix: str, namespace: str | None) -> Iterator[Pattern]:
        for entry in resolver.url_patterns:
            if isinstance(entry, URLResolver):
                inner = (
                    f"{namespace}:{entry.namespace}"
                    if namespace and entry.namespace
                    else (entry.namespace or namespace)
                )
                yield from walk(entry, prefix + str(entry.pattern), inner)
            else:
                route = prefix + str(entry.pattern)
                if route.startswith(SKIPPED_PREFIXES):
                    continue
                name = f"{namespace}:{entry.name}" if namespace and entry.name else entry.name
                yield Pattern(route=route, name=name, pattern=entry)

    yield from walk(get_resolver(), "", None)


def is_admin(pattern: Pattern) -> bool:
    return pattern.route.startswith("admin/")


# -- admin URLs --------------------------------------------------------------------------------

# The admin's own pages, by URL name, and what fills their parameters.
ADMIN_SITE_KWARGS: dict[str, Callable[[World], dict]] = {
    "admin:app_list": lambda w: {"app_label": "memory"},
    "admin:view_on_site": lambda w: {"content_type_id": "1", "object_id": "1"},
    "admin:auth_user_password_change": lambda w: {"id": w.user.pk},
}
ADMIN_OPEN = {"admin:login"}  # the admin's login form answers anyone


def admin_object_id(world: World, app_label: str, model_name: str) -> str:
    """A real row of the model an admin URL names: the world's own where it has one."""
    chosen = {
        ("memory", "node"): world.document.pk,
        ("auth", "user"): world.user.pk,
        ("auth", "group"): world.group.pk,
    }.get((app_label, model_name))
    if chosen is not None:
        return str(chosen)
    model = apps.get_model(app_label, model_name)
    row = model._default_manager.order_by("pk").first()
    assert row is not None, f"The world has no {app_label}.{model_name}: add one to tests/security/world.py."
    return str(row.pk)


def admin_url(world: World, pattern: Pattern) -> str:
    """The URL of an admin pattern with its parameters filled from the world."""
    if pattern.name in ADMIN_SITE_KWARGS:
        return reverse(pattern.name, kwargs=ADMIN_SITE_KWARGS[pattern.name](world))
    if pattern.route == "admin/(?P<url>.*)$":
        return "/admin/no-such-page/"
    model = _admin_model(pattern)
    if model is None:  # an admin page without parameters
        return reverse(pattern.name)
    app_label, model_name = model
    object_id = admin_object_id(world, app_label, model_name)
    if pattern.name is None:  # admin/<app>/<model>/<object_id>/ redirects to the change page
        return f"/admin/{app_label}/{model_name}/{object_id}/"
    if "<path:object_id>" in pattern.route:
        return reverse(pattern.name, kwargs={"object_id": object_id})
    return reverse(pattern.name)


def _admin_model(pattern: Pattern) -> tuple[str, str] | None:
    for model in admin.site._registry:
        app_label, model_name = model._meta.app_label, model._meta.model_name
        if pattern.route.startswith(f"admin/{app_label}/{model_name}/"):
            return app_label, model_name
    return None


# -- callers ------------------------------------------------------------------------------------


def client_for(world: World, caller: str, **options: Any) -> Client:
    """A client as one of the callers: nobody; a swarm node's token and no session; a staff
    user's token; a logged-in user who is not staff; staff."""
    client = Client(**options)
    if caller == "token":
        client.defaults["HTTP_AUTHORIZATION"] = f"Token {world.user_token}"
    elif caller == "staff_token":
        client.defaults["HTTP_AUTHORIZATION"] = f"Token {world.staff_token}"
    elif caller == "user":
        client.force_login(type(world.user).objects.get(pk=world.user.pk))
    elif caller == "staff":
        client.force_login(type(world.staff).objects.get(pk=world.staff.pk))
    return client


def send(client: Client, method: str, url: str, call: Call | None, world: World, **extra: Any):
    """The request `call` describes (or a bare one), by `method`."""
    headers = {**(HTMX if call is not None and call.htmx else {}), **extra}
    url = url + (call.query if call is not None else "")
    if call is not None and call.json is not None:
        return client.generic(method, url, json.dumps(call.json(world)), content_type="application/json", **headers)
    if call is not None and call.raw is not None:
        return client.generic(method, url, call.raw(world), content_type="application/octet-stream", **headers)
    if call is not None and call.form is not None and method == "POST":
        return client.post(url, call.form(world), **headers)
    return getattr(client, method.lower())(url, **headers)
