import pytest

from memory import selectors
from memory.models import Node
from memsite.errors import InvalidInput, NotFound
from tests.factories import DocumentFactory, NodeFactory, ProjectFactory, default_space

pytestmark = pytest.mark.django_db


def test_roots_are_the_four_internal_folders_in_order():
    assert [(n.name, n.type) for n in selectors.node_roots(space=default_space())] == [
        ("swarmstar", "internal_folder"),
        ("user", "internal_folder"),
        ("projects", "internal_folder"),
        ("references", "internal_folder"),
    ]


def test_user_folder_holds_the_user_documents():
    user_folder = selectors.node_internal_folder(space=default_space(), name="user")
    assert [n.name for n in selectors.node_children(node=user_folder)] == [
        "user_preferences.md",
        "requested_features.md",
        "user_requirements.md",
    ]
    assert selectors.node_content(
        node=selectors.node_resolve(space=default_space(), path="/user/user_preferences.md")
    ).startswith(b"# User preferences")


def test_ancestors_and_readable_path():
    a = NodeFactory(name="a")
    b = NodeFactory(parent=a, name="b")
    leaf = DocumentFactory(parent=b, name="leaf.md")
    assert [n.name for n in selectors.node_ancestors(node=leaf)] == ["swarmstar", "a", "b"]
    assert selectors.node_path(node=leaf) == "/swarmstar/a/b/leaf.md"
    assert selectors.node_ancestors(node=Node.objects.get(depth=1, name="user")).count() == 0


def test_resolve_finds_only_the_exact_path():
    a = NodeFactory(name="a")
    NodeFactory(parent=a, name="b")
    NodeFactory(parent=selectors.node_internal_folder(space=default_space(), name="references"), name="b")
    assert selectors.node_resolve(space=default_space(), path="/swarmstar/a/b").parent_id == a.id
    assert selectors.node_resolve(space=default_space(), path="/swarmstar/a/b/").name == "b"
    for missing in ("/swarmstar/b", "/a/b", "/swarmstar/a/b/c", "/nothing"):
        with pytest.raises(NotFound):
            selectors.node_resolve(space=default_space(), path=missing)
    for malformed in ("", "swarmstar/a", "/"):
        with pytest.raises(InvalidInput):
            selectors.node_resolve(space=default_space(), path=malformed)


def test_children_at_a_path_are_read_in_one_query(django_assert_num_queries):
    space = default_space()
    a = NodeFactory(name="a")
    b = NodeFactory(parent=a, name="b")
    DocumentFactory(parent=b, name="one.md")
    DocumentFactory(parent=b, name="two.md")
    # the same name elsewhere
    NodeFactory(parent=selectors.node_internal_folder(space=space, name="references"), name="b")
    with django_assert_num_queries(1):
        children = [n.name for n in selectors.node_children_at(space=space, path="/swarmstar/a/b/")]
    assert children == ["one.md", "two.md"]
    roots = [n.name for n in selectors.node_children_at(space=space, path="/")]
    assert roots == ["swarmstar", "user", "projects", "references"]
    for childless in ("/swarmstar/a/b/one.md", "/swarmstar/b", "/nothing/a/b"):
        assert not selectors.node_children_at(space=space, path=childless).exists()


def test_subtree_excludes_the_neighbours_branch():
    first = NodeFactory(name="first")
    NodeFactory(parent=first)
    second = NodeFactory(name="second")
    NodeFactory(parent=second)
    first = Node.objects.get(pk=first.pk)
    assert len(selectors.node_children_ids(node=first)) == 1
    assert {n.pk for n in selectors.node_subtree(node=first)} == {first.pk, *selectors.node_children_ids(node=first)}


def test_project_root_is_found_from_any_depth():
    project = ProjectFactory()
    src = NodeFactory(parent=project, name="src")
    assert selectors.node_project_root(node=src).pk == project.pk
    assert selectors.node_project_root(node=project).pk == project.pk
    assert selectors.node_project_root(node=NodeFactory()) is None


def test_children_count_queries_do_not_grow(django_assert_num_queries):
    folder = NodeFactory(name="big")
    for index in range(30):
        DocumentFactory(parent=folder, name=f"{index}.md")
    folder = Node.objects.get(pk=folder.pk)
    with django_assert_num_queries(1):
        sizes = [child.content_size for child in selectors.node_children(node=folder)]
    assert len(sizes) == 30 and all(size > 0 for size in sizes)


def test_readable_paths_of_many_nodes_take_one_query(django_assert_num_queries):
    a = NodeFactory(name="a")
    b = NodeFactory(parent=a, name="b")
    leaf = DocumentFactory(parent=b, name="leaf.md")
    other = DocumentFactory(parent=selectors.node_internal_folder(space=default_space(), name="user"), name="other.md")
    nodes = list(Node.objects.filter(pk__in=[a.pk, b.pk, leaf.pk, other.pk]))
    roots = list(Node.objects.filter(depth=1))
    with django_assert_num_queries(1):
        paths = selectors.node_paths(nodes=[*nodes, *roots])
    assert paths[leaf.pk] == "/swarmstar/a/b/leaf.md" == selectors.node_path(node=leaf)
    assert paths[other.pk] == "/user/other.md"
    assert paths[a.pk] == "/swarmstar/a"
    assert {paths[root.pk] for root in roots} >= {"/swarmstar", "/user", "/projects", "/references"}


def test_readable_paths_of_only_roots_or_nothing_need_no_query(django_assert_num_queries):
    roots = list(Node.objects.filter(depth=1))
    with django_assert_num_queries(0):
        assert selectors.node_paths(nodes=[]) == {}
        assert selectors.node_paths(nodes=roots)[roots[0].pk] == f"/{roots[0].name}"


def test_a_slice_of_empty_content_is_empty_bytes():
    empty = DocumentFactory(content=b"")
    piece = selectors.node_content_slice(node_id=empty.pk, start=0, length=100)
    assert bytes(piece.data) == b"" and piece.size == 0
    assert (
        bytes(selectors.node_content_slice(node_id=DocumentFactory(content=b"abc").pk, start=1, length=5).data) == b"bc"
    )
