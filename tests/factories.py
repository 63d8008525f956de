"""Factories that build test data through the services, so tests see what real writes make."""

import factory
from django.contrib.auth import get_user_model

from memory import selectors, services


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.django.Password("password")


class StaffFactory(UserFactory):
    is_staff = True
    is_superuser = True


class NodeFactory(factory.Factory):
    """A node created by `memory.services.node_create`; by default a folder in `swarmstar`."""

    class Meta:
        model = dict

    parent = factory.LazyFunction(lambda: selectors.node_internal_folder(name="swarmstar"))
    type = "folder"
    name = factory.Sequence(lambda n: f"node-{n}")
    description = factory.LazyAttribute(lambda node: f"About {node.name}")
    context = None
    content = None
    user = None

    @classmethod
    def _create(cls, model_class, **kwargs):
        return services.node_create(**kwargs)

    _build = _create


class DocumentFactory(NodeFactory):
    type = "document"
    name = factory.Sequence(lambda n: f"note-{n}.md")
    content = factory.LazyAttribute(lambda node: f"# {node.name}\n\nSome notes.".encode())


class ProjectFactory(NodeFactory):
    parent = factory.LazyFunction(lambda: selectors.node_internal_folder(name="projects"))
    type = "project_root_folder"
    name = factory.Sequence(lambda n: f"project-{n}")
