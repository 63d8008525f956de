"""Factories that build test data through the services, so tests see what real writes make."""

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.utils import timezone

from agents.context import services as context_services
from agents.graphs import services as graph_services
from memory import selectors, services
from memsite.spaces import services as space_services
from memsite.spaces.logic import DEFAULT_SPACE, Role
from memsite.spaces.models import ApiToken, Space
from memsite.spaces.principals import Principal, system_principal
from memsite.spaces.selectors import membership_role


def default_space() -> Space:
    """The default space. The migrations make it; a transactional test empties the tables when
    it ends, so it is made again here for the next one (memory makes its internal folders)."""
    space, _ = Space.objects.get_or_create(slug=DEFAULT_SPACE, defaults={"name": "Default"})
    return space


def system(space: Space | None = None) -> Principal:
    """memsite itself in `space` (the default space if none): who a test's own setup writes as."""
    return system_principal(space or default_space())


def acting(user, space: Space | None = None) -> Principal:
    """`user`'s session principal in `space` (the default space if none), where they must be a
    member, with their role there now."""
    space = space or default_space()
    role = membership_role(member=user, space_id=space.pk)
    assert role is not None, f"{user} is not a member of {space}"
    return Principal(user, space, role, "", None)


def token_for(user, role: str | None = None, write_under: str = "", space: Space | None = None, **options) -> str:
    """The key of a new API token of `user` in `space` (the default space if none): with the
    user's own role there unless `role` says otherwise (not the default of a token made
    without one, an editor's: the tests of a role name it). An owner's manages the space only
    with `manage=True`."""
    space = space or default_space()
    role = role or membership_role(member=user, space_id=space.pk)
    made = space_services.token_create(
        member=user, space=space, name="test token", role=role, write_under=write_under, **options
    )
    return made.key


def member_of_default_space(role: Role) -> factory.PostGeneration:
    """Joins the user made to the default space with `role`, unless given another (`role=`)."""

    def join(user, create, extracted, **kwargs):
        if create:
            space_services.membership_set(space=default_space(), member=user, role=extracted or role)

    return factory.PostGeneration(join)


class UserFactory(factory.django.DjangoModelFactory):
    """A user who is an editor of the default space."""

    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.django.Password("password")
    role = member_of_default_space(Role.EDITOR)


class StaffFactory(UserFactory):
    """A staff user who is an owner of the default space."""

    is_staff = True
    is_superuser = True
    role = member_of_default_space(Role.OWNER)


def staff_with(*permissions: str, **fields):
    """A staff user who is not a superuser, an owner of the default space, allowed by Django
    these models' actions in the admin ("memory.change_node"): what a space lets them do is
    the admin's to check."""
    user = StaffFactory(is_superuser=False, **fields)
    for permission in permissions:
        app_label, codename = permission.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
    user.save()  # the factory sets the password after creating the row
    return user


class NodeFactory(factory.Factory):
    """A node created by `memory.services.node_create`; by default a folder in `swarmstar`."""

    class Meta:
        model = dict

    parent = factory.LazyFunction(lambda: selectors.node_internal_folder(space=default_space(), name="swarmstar"))
    type = "folder"
    name = factory.Sequence(lambda n: f"node-{n}")
    description = factory.LazyAttribute(lambda node: f"About {node.name}")
    context = None
    content = None
    by = factory.LazyAttribute(lambda node: system(node.parent.space if node.parent is not None else None))

    @classmethod
    def _create(cls, model_class, **kwargs):
        return services.node_create(**kwargs)

    _build = _create


class DocumentFactory(NodeFactory):
    type = "document"
    name = factory.Sequence(lambda n: f"note-{n}.md")
    content = factory.LazyAttribute(lambda node: f"# {node.name}\n\nSome notes.".encode())


class ProjectFactory(NodeFactory):
    parent = factory.LazyFunction(lambda: selectors.node_internal_folder(space=default_space(), name="projects"))
    type = "project_root_folder"
    name = factory.Sequence(lambda n: f"project-{n}")


# Searches are built row by row, not through `search_start`: trace tests need the states a worker
# writes mid-walk (running, with steps, ended with a result), which no single service call makes.


def _walk_state(questions: list[str]) -> dict:
    return {
        "answers": [{"question": question, "answer": "", "node_ids": [], "complete": False} for question in questions],
        "original_count": len(questions),
    }


class SearchFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "memory.Search"

    space = factory.LazyFunction(default_space)
    questions = factory.LazyFunction(lambda: ["Where are the deployment notes?"])
    max_llm_calls = 40
    max_tokens = 200_000
    timeout_s = 300
    acted_as = "system"  # a test's own search, with no user: memsite's
    state = factory.LazyAttribute(lambda search: _walk_state(search.questions))


class SearchStepFactory(factory.django.DjangoModelFactory):
    """The next step of `search`, written as the worker writes it: the search's step count
    moves with it (the trace stops polling only once every counted step is shown)."""

    class Meta:
        model = "memory.SearchStep"

    search = factory.SubFactory(SearchFactory)
    kind = "route"
    summary = factory.Sequence(lambda n: f"Step summary {n}.")
    node_name = factory.LazyAttribute(lambda step: step.node.name if step.node is not None else "")
    node = None
    llm_call = None

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        from memory.models import Search

        search = kwargs["search"]
        kwargs.setdefault("number", search.steps.count() + 1)
        step = super()._create(model_class, *args, **kwargs)
        Search.objects.filter(pk=search.pk, steps_taken__lt=step.number).update(steps_taken=step.number)
        search.steps_taken = max(search.steps_taken, step.number)
        return step


class AgentFactory(factory.Factory):
    """An agent created by `agents.context.services.agent_create`, in the default space unless
    given another."""

    class Meta:
        model = dict

    space = factory.LazyFunction(default_space)
    name = factory.Sequence(lambda n: f"agent-{n}")
    model = "gpt-4"

    @classmethod
    def _create(cls, model_class, **kwargs):
        return context_services.agent_create(**kwargs)

    _build = _create


class GraphFactory(factory.Factory):
    """A reasoning graph created by `agents.graphs.services.graph_create`, with its task node, in
    the default space unless given another."""

    class Meta:
        model = dict

    space = factory.LazyFunction(default_space)
    task = factory.Sequence(lambda n: f"Find the port of service {n}")
    model = "gpt-4"
    trigger_tokens = 8_000
    target_tokens = 4_000

    @classmethod
    def _create(cls, model_class, **kwargs):
        return graph_services.graph_create(**kwargs)

    _build = _create


def a_member(space: Space | None = None) -> Principal:
    """A new editor of `space` (the default space if none), acting through a session: who sets
    an agent ticking when the test does not care who."""
    user = UserFactory()
    if space is not None:
        space_services.membership_set(space=space, member=user, role=Role.EDITOR)
    return acting(user, space)


def ticked_by(agent, by: Principal | None = None) -> Principal:
    """Records `by` (a new member if none) as who set the agent ticking, its ticking paused, as
    `ticking_pause` leaves it: the ticks a test runs itself then act as `by`."""
    from agents.brains.models import Brain
    from agents.brains.services.brains import brain_create

    by = by or a_member(agent.space)
    brain_create(agent=agent)
    Brain.objects.filter(pk=agent.pk).update(ticking_by=by.user, ticking_token=by.token)
    return by


def asker_gone(user, how: str) -> None:
    """The asker made unable to act in the default space: removed, deleted, turned reader, or
    with their token revoked."""
    if how == "removed":
        space_services.membership_remove(space=default_space(), username=user.username)
    elif how == "deleted":
        user.delete()
    elif how == "reader":
        space_services.membership_set(space=default_space(), member=user, role=Role.READER)
    else:
        ApiToken.objects.filter(user=user).update(revoked_at=timezone.now())
