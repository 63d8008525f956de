import pytest

from memory import selectors, services
from memory.models import Node, NodeContent
from memory.services import NodeSpec
from memsite.errors import Conflict, Forbidden, InvalidInput, TooLarge
from tests.factories import DocumentFactory, NodeFactory, ProjectFactory, acting, default_space, system

pytestmark = pytest.mark.django_db


def tree_is_valid() -> bool:
    return Node.objects.find_problems() == ([], [], [], [], [])


class TestNodeCreate:
    def test_creates_a_folder_with_a_public_id_inside_its_parent(self, internal, user):
        folder = services.node_create(
            parent=internal["swarmstar"], type="folder", name="logs", description="Run logs", by=acting(user)
        )
        assert folder.id.startswith("memory_") and len(folder.id) == len("memory_") + 32
        assert folder.is_folder and folder.parent_id == internal["swarmstar"].id
        assert folder.created_by == user and folder.version == 1
        assert selectors.node_children_ids(node=Node.objects.get(pk=internal["swarmstar"].pk)) == [folder.id]
        assert tree_is_valid()

    def test_children_keep_insertion_order(self, internal):
        names = ["zeta", "alpha", "mid"]
        for name in names:
            NodeFactory(name=name)
        swarmstar = Node.objects.get(pk=internal["swarmstar"].pk)
        assert [node.name for node in selectors.node_children(node=swarmstar)] == names

    def test_document_stores_its_text_as_content(self):
        document = DocumentFactory(name="a.md", content="# Héllo".encode())
        row = NodeContent.objects.get(node=document)
        assert bytes(row.data) == "# Héllo".encode() and row.size == 8
        assert len(row.sha256) == 64

    def test_sibling_names_are_unique(self, internal):
        NodeFactory(name="same")
        with pytest.raises(Conflict, match="already has a child named 'same'"):
            NodeFactory(name="same")
        assert Node.objects.filter(name="same").count() == 1

    def test_same_name_in_different_folders_is_fine(self, internal):
        NodeFactory(name="notes")
        NodeFactory(name="notes", parent=internal["references"])
        assert Node.objects.filter(name="notes").count() == 2

    @pytest.mark.parametrize(
        "name", ["", "   ", "a/b", "..", ".", "bell\x07", "x" * 256, "a\u202etxt.exe", "zero\u200bwidth", "a\u2028b"]
    )
    def test_bad_names_are_refused(self, internal, name):
        before = Node.objects.count()
        with pytest.raises(InvalidInput):
            NodeFactory(name=name)
        assert Node.objects.count() == before

    def test_names_are_trimmed_and_nfc_normalized(self):
        decomposed = "cafe\u0301.md"
        node = DocumentFactory(name=f"  {decomposed} ")
        assert node.name == "caf\u00e9.md"
        with pytest.raises(Conflict):
            DocumentFactory(name="caf\u00e9.md")

    def test_unknown_type_names_the_known_ones(self):
        with pytest.raises(InvalidInput, match="Unknown memory type 'blob'.*document"):
            NodeFactory(type="blob")

    def test_internal_folders_cannot_be_created(self):
        with pytest.raises(Forbidden):
            NodeFactory(type="internal_folder")

    def test_roots_cannot_be_created(self):
        with pytest.raises(InvalidInput, match="needs a parent"):
            NodeFactory(parent=None)

    def test_documents_cannot_hold_children(self):
        document = DocumentFactory()
        with pytest.raises(InvalidInput, match="not a folder"):
            NodeFactory(parent=document)

    def test_project_roots_live_directly_under_projects(self, internal):
        with pytest.raises(InvalidInput, match="'projects' folder"):
            NodeFactory(type="project_root_folder", parent=internal["references"])
        assert ProjectFactory().parent_id == internal["projects"].id

    def test_project_files_need_a_project_and_a_clean_relative_path(self):
        with pytest.raises(InvalidInput, match="inside a project_root_folder"):
            NodeFactory(type="project_file_bytes", context={"file_path": "a.py"}, content=b"")
        project = ProjectFactory()
        for bad in ["/etc/passwd", "../up.py", "a/../../b", "", "a\\b", "new\nline", "x" * 1025, " a/b"]:
            with pytest.raises(InvalidInput, match="file_path"):
                NodeFactory(parent=project, type="project_file_bytes", name="f", context={"file_path": bad})
        with pytest.raises(InvalidInput, match="file_path: Field required"):
            NodeFactory(parent=project, type="project_file_bytes", name="f", context={})
        node = NodeFactory(
            parent=project, type="project_file_bytes", name="f", context={"file_path": "./src//f.py"}, content=b"x"
        )
        assert node.context == {"file_path": "src/f.py"}

    def test_two_files_of_a_project_cannot_share_a_path(self):
        project = ProjectFactory()
        NodeFactory(parent=project, type="project_file_bytes", name="a", context={"file_path": "a.py"})
        with pytest.raises(Conflict, match="already has a file at 'a.py'"):
            NodeFactory(parent=project, type="project_file_bytes", name="b", context={"file_path": "a.py"})

    def test_a_file_path_cannot_turn_another_file_into_a_folder(self):
        project = ProjectFactory()
        NodeFactory(parent=project, type="project_file_bytes", name="z", context={"file_path": "z"})
        with pytest.raises(Conflict, match="a folder"):
            NodeFactory(parent=project, type="project_file_bytes", name="w", context={"file_path": "z/w"})
        NodeFactory(parent=project, type="project_file_bytes", name="b", context={"file_path": "d/b"})
        with pytest.raises(Conflict, match="a folder"):
            NodeFactory(parent=project, type="project_file_bytes", name="d", context={"file_path": "d"})

    def test_unexpected_context_keys_are_refused(self):
        with pytest.raises(InvalidInput, match="Extra inputs are not permitted"):
            NodeFactory(context={"colour": "red"})

    def test_content_over_the_limit_is_refused(self, settings):
        settings.MEMSITE_MAX_CONTENT_BYTES = 10
        with pytest.raises(TooLarge, match="11 bytes; the limit is 10"):
            DocumentFactory(content=b"x" * 11)
        assert not NodeContent.objects.filter(size=11).exists()

    def test_document_content_must_be_utf8(self):
        with pytest.raises(InvalidInput, match="UTF-8"):
            DocumentFactory(content=b"\xff\xfe")

    def test_folders_hold_no_content(self):
        with pytest.raises(InvalidInput, match="hold no content"):
            NodeFactory(content=b"x")


class TestNodeBulkCreate:
    def test_creates_branches_with_valid_paths_and_counts(self, internal):
        specs = [
            NodeSpec(name="a", type="folder", children=[NodeSpec(name="a1.md", type="document", content=b"1")]),
            NodeSpec(name="b", type="folder", children=[NodeSpec(name=f"b{i}", type="folder") for i in range(5)]),
        ]
        NodeFactory(name="existing")
        services.node_bulk_create(parent=internal["swarmstar"], specs=specs, by=system())
        swarmstar = Node.objects.get(pk=internal["swarmstar"].pk)
        assert [n.name for n in selectors.node_children(node=swarmstar)] == ["existing", "a", "b"]
        assert selectors.node_resolve(space=default_space(), path="/swarmstar/b/b4").parent.name == "b"
        assert bytes(NodeContent.objects.get(node__name="a1.md").data) == b"1"
        assert tree_is_valid()
        # a node added later goes after the bulk-created ones
        NodeFactory(name="later")
        assert [n.name for n in selectors.node_children(node=swarmstar)][-1] == "later"

    def test_validates_everything_before_writing(self, internal):
        before = Node.objects.count()
        specs = [
            NodeSpec(name="good", type="folder"),
            NodeSpec(name="deep", type="folder", children=[NodeSpec(name="bad/name", type="folder")]),
        ]
        with pytest.raises(InvalidInput, match="must not contain '/'"):
            services.node_bulk_create(parent=internal["swarmstar"], specs=specs, by=system())
        assert Node.objects.count() == before

    def test_refuses_duplicate_names_and_taken_names(self, internal):
        NodeFactory(name="taken")
        for specs in (
            [NodeSpec(name="x", type="folder"), NodeSpec(name="x", type="folder")],
            [NodeSpec(name="taken", type="folder")],
        ):
            with pytest.raises(Conflict):
                services.node_bulk_create(parent=internal["swarmstar"], specs=specs, by=system())


class TestNodeUpdate:
    def test_rename_describe_and_bump_version(self, user):
        node = NodeFactory(name="old")
        updated = services.node_update(node=node, name="new", description="Fresh", expected_version=1, by=acting(user))
        assert (updated.name, updated.description, updated.version) == ("new", "Fresh", 2)

    def test_stale_version_is_a_conflict_and_changes_nothing(self, user):
        node = NodeFactory(name="old")
        services.node_update(node=node, description="first", by=acting(user))
        with pytest.raises(Conflict, match="version 2, not 1"):
            services.node_update(node=node, name="second", expected_version=1, by=acting(user))
        assert Node.objects.get(pk=node.pk).name == "old"

    def test_rename_to_a_sibling_name_is_a_conflict(self, user):
        NodeFactory(name="one")
        two = NodeFactory(name="two")
        with pytest.raises(Conflict):
            services.node_update(node=two, name="one", by=acting(user))

    def test_internal_folders_cannot_be_renamed_or_retyped(self, internal, user, staff):
        for changes in ({"name": "mine"}, {"type": "folder"}):
            for who in (user, staff):
                with pytest.raises(Forbidden):
                    services.node_update(node=internal["user"], **changes, by=acting(who))
        assert Node.objects.get(pk=internal["user"].pk).name == "user"

    def test_only_staff_describe_internal_folders(self, internal, user, staff):
        with pytest.raises(Forbidden, match="Only owners"):
            services.node_update(node=internal["references"], description="mine", by=acting(user))
        updated = services.node_update(node=internal["references"], description="Scraped docs", by=acting(staff))
        assert updated.description == "Scraped docs"

    def test_retype_between_compatible_types(self, internal, user):
        folder = NodeFactory(parent=internal["projects"], name="proj")
        assert (
            services.node_update(node=folder, type="project_root_folder", by=acting(user)).type == "project_root_folder"
        )
        with pytest.raises(InvalidInput, match="hold different things"):
            services.node_update(node=DocumentFactory(), type="folder", by=acting(user))

    def test_context_is_validated_against_the_type(self, user):
        project = ProjectFactory()
        file = NodeFactory(parent=project, type="project_file_bytes", name="a", context={"file_path": "a.py"})
        with pytest.raises(InvalidInput, match="must stay inside the project"):
            services.node_update(node=file, context={"file_path": "../x"}, by=acting(user))
        assert services.node_update(node=file, context={"file_path": "b.py"}, by=acting(user)).context == {
            "file_path": "b.py"
        }


class TestNodeMove:
    def test_moves_a_branch_and_keeps_the_tree_valid(self, internal, user):
        source = NodeFactory(name="source")
        child = NodeFactory(parent=source, name="child")
        DocumentFactory(parent=child, name="leaf.md")
        moved = services.node_move(node=source, parent=internal["references"], by=acting(user))
        assert moved.parent_id == internal["references"].id and moved.version == 2
        assert selectors.node_resolve(space=default_space(), path="/references/source/child/leaf.md").name == "leaf.md"
        assert tree_is_valid()

    def test_moving_into_its_own_branch_is_a_conflict(self, user):
        outer = NodeFactory(name="outer")
        inner = NodeFactory(parent=outer, name="inner")
        for target in (outer, inner):
            with pytest.raises(Conflict, match="into itself or its own branch"):
                services.node_move(node=outer, parent=target, by=acting(user))
        assert Node.objects.get(pk=inner.pk).parent_id == outer.pk

    def test_internal_folders_cannot_move(self, internal, user):
        with pytest.raises(Forbidden):
            services.node_move(node=internal["user"], parent=internal["swarmstar"], by=acting(user))

    def test_name_clash_at_the_target_is_a_conflict(self, internal, user):
        NodeFactory(name="dup", parent=internal["references"])
        node = NodeFactory(name="dup")
        with pytest.raises(Conflict):
            services.node_move(node=node, parent=internal["references"], by=acting(user))

    def test_project_files_stay_in_projects(self, internal, user):
        project = ProjectFactory()
        src = NodeFactory(parent=project, name="src")
        NodeFactory(parent=src, type="project_file_bytes", name="a.py", context={"file_path": "src/a.py"})
        with pytest.raises(InvalidInput, match="within projects"):
            services.node_move(node=src, parent=internal["swarmstar"], by=acting(user))

    def test_project_files_moved_to_another_project_must_not_clash_with_its_files(self, user):
        def project_with(*paths: str) -> tuple[Node, Node]:
            project = ProjectFactory()
            src = NodeFactory(parent=project, name="src")
            for path in paths:
                NodeFactory(
                    parent=src, type="project_file_bytes", name=path.rsplit("/", 1)[-1], context={"file_path": path}
                )
            return project, src

        _, src = project_with("src/a.py", "src/b.py")
        target, _ = project_with("src/b.py")
        elsewhere = NodeFactory(parent=target, name="elsewhere")
        with pytest.raises(Conflict, match="already has files at: src/b.py"):
            services.node_move(node=src, parent=elsewhere, by=acting(user))

        nested, _ = project_with("src/a.py/x")  # a.py would be a folder there
        with pytest.raises(Conflict, match="would make a file"):
            services.node_move(node=src, parent=NodeFactory(parent=nested, name="elsewhere"), by=acting(user))

        free, _ = project_with("lib/c.py")
        moved = services.node_move(node=src, parent=NodeFactory(parent=free, name="elsewhere"), by=acting(user))
        assert selectors.node_project_root(node=moved).pk == free.pk and tree_is_valid()


class TestNodeDelete:
    def test_deletes_the_whole_branch_and_its_content(self, internal, user):
        folder = NodeFactory(name="gone")
        DocumentFactory(parent=NodeFactory(parent=folder))
        before = Node.objects.count()
        assert services.node_delete(node=folder, by=acting(user)) == 3
        assert Node.objects.count() == before - 3
        assert not NodeContent.objects.filter(node__name__startswith="note-").exists()
        assert Node.objects.get(pk=internal["swarmstar"].pk).numchild == 0
        assert tree_is_valid()

    def test_internal_folders_cannot_be_deleted(self, internal, staff):
        with pytest.raises(Forbidden):
            services.node_delete(node=internal["projects"], by=acting(staff))


class TestNodeContentSet:
    def test_replaces_content_and_bumps_version(self, user):
        document = DocumentFactory()
        updated = services.node_content_set(node=document, data=b"# new", expected_version=1, by=acting(user))
        assert updated.version == 2 and updated.content_size == 5
        assert selectors.node_content(node=document) == b"# new"

    def test_stale_version_keeps_the_old_content(self, user):
        document = DocumentFactory(content=b"old")
        services.node_content_set(node=document, data=b"mine", by=acting(user))
        with pytest.raises(Conflict):
            services.node_content_set(node=document, data=b"theirs", expected_version=1, by=acting(user))
        assert selectors.node_content(node=document) == b"mine"
