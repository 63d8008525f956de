import pytest
from pydantic import BaseModel, ConfigDict

from memory import selectors, types
from memory.types import ContentKind, MemoryType, RenderInput
from memsite.errors import InvalidInput
from memsite.llm.tokens import offline_counter
from tests.factories import DocumentFactory, NodeFactory


class UrlContext(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str


@pytest.fixture
def web_page_type():
    """A type registered by a test, as a deployment would add one."""
    web_page = types.register(
        MemoryType(
            name="web_page",
            is_folder=False,
            description="A page scraped from the web.",
            context_schema=UrlContext,
            content=ContentKind.TEXT,
        )
    )
    yield web_page
    types.unregister("web_page")


@pytest.mark.django_db
def test_a_registered_type_is_usable_end_to_end(web_page_type, internal):
    node = NodeFactory(
        parent=internal["references"],
        type="web_page",
        name="django.html",
        context={"url": "https://docs.djangoproject.com/"},
        content=b"Django docs",
    )
    assert not node.is_folder and node.context == {"url": "https://docs.djangoproject.com/"}
    with pytest.raises(InvalidInput, match="url: Field required"):
        NodeFactory(parent=internal["references"], type="web_page", name="x", context={})


def test_unregistered_type_is_unknown(web_page_type):
    types.unregister("web_page")
    with pytest.raises(InvalidInput, match="Unknown memory type 'web_page'"):
        types.get_type("web_page")


def test_folder_types_cannot_declare_content():
    with pytest.raises(ValueError, match="cannot hold content"):
        types.register(MemoryType(name="odd", is_folder=True, description="", content=ContentKind.TEXT))


def test_builtin_types():
    assert {t.name: t.is_folder for t in types.all_types()} == {
        "document": False,
        "folder": True,
        "internal_folder": True,
        "project_file_bytes": False,
        "project_root_folder": True,
    }


@pytest.mark.django_db
def test_render_stays_within_the_token_limit():
    document = DocumentFactory(name="long.md", description="A long note", content=("word " * 5000).encode())
    rendered = types.get_type("document").render(
        RenderInput(
            name=document.name,
            description=document.description,
            context=document.context,
            content=selectors.node_content(node=document),
            token_limit=100,
        )
    )
    assert rendered.startswith("# long.md\nA long note\n\nword word")
    assert offline_counter().count(rendered) <= 100


def test_render_describes_binary_content_instead_of_dumping_it():
    rendered = types.get_type("project_file_bytes").render(
        RenderInput(
            name="logo.png",
            description="",
            context={"file_path": "img/logo.png"},
            content=b"\x89PNG\x00\x00" + bytes(100),
            token_limit=50,
        )
    )
    assert rendered == "# logo.png (img/logo.png)\n\n(binary content, 106 bytes)"
