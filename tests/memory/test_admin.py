import pytest
from django.contrib.admin.utils import quote
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from memory import selectors, services
from memory.models import Node, NodeEvent
from memsite.spaces.models import Space
from memsite.spaces.services import membership_set
from tests.factories import DocumentFactory, NodeFactory, staff_with, system

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, staff):
    staff.save()  # the factory sets the password after creating the row
    client.force_login(staff)
    return client


def change_url(node: Node) -> str:
    # Admin URLs quote the primary key: an id such as "memory_25..." must not read as "%".
    return reverse("admin:memory_node_change", args=[quote(node.pk)])


def delete_url(node: Node) -> str:
    return reverse("admin:memory_node_delete", args=[quote(node.pk)])


def test_staff_open_the_changelist(admin_client, internal):
    response = admin_client.get(reverse("admin:memory_node_changelist"))
    assert response.status_code == 200
    html = response.content.decode()
    for name in internal:
        assert f"/{name}" in html
    assert "user_preferences.md" in html


def test_the_changelist_searches_names_and_descriptions(admin_client, internal):
    NodeFactory(name="alpha-notes", description="Nothing special")
    NodeFactory(name="beta", description="Mentions the zebra project")
    url = reverse("admin:memory_node_changelist")
    html = admin_client.get(url, {"q": "alpha"}).content.decode()
    assert "alpha-notes" in html and "beta" not in html
    html = admin_client.get(url, {"q": "zebra"}).content.decode()
    assert "beta" in html and "alpha-notes" not in html


def test_the_changelist_filters_by_type(admin_client, internal):
    DocumentFactory(name="only-doc.md")
    html = admin_client.get(reverse("admin:memory_node_changelist"), {"type__exact": "document"}).content.decode()
    assert "only-doc.md" in html and "/swarmstar<" not in html


def test_users_without_staff_cannot_open_the_admin(client, user):
    client.force_login(user)
    assert client.get(reverse("admin:memory_node_changelist")).status_code == 302


def test_an_internal_folder_has_only_its_description_editable(admin_client, internal):
    folder = internal["swarmstar"]
    response = admin_client.get(change_url(folder))
    assert response.status_code == 200
    form = response.context["adminform"].form
    assert set(form.fields) == {"description", "expected_version"}
    html = response.content.decode()
    assert 'name="description"' in html and 'name="name"' not in html
    assert delete_url(folder) not in html


def test_staff_edit_an_internal_folders_description_through_the_services(admin_client, internal):
    folder = internal["swarmstar"]
    response = admin_client.post(
        change_url(folder),
        {"description": "The swarm's own notes.", "expected_version": folder.version, "name": "hacked"},
    )
    assert response.status_code == 302
    folder.refresh_from_db()
    assert (folder.name, folder.description, folder.version) == ("swarmstar", "The swarm's own notes.", 2)


def test_an_ordinary_node_is_renamed_through_the_services(admin_client):
    node = NodeFactory(name="before")
    response = admin_client.post(
        change_url(node),
        {"name": "after", "type": "folder", "description": "d", "context": "{}", "expected_version": node.version},
    )
    assert response.status_code == 302
    node.refresh_from_db()
    assert (node.name, node.description, node.version) == ("after", "d", 2)


def test_a_refused_admin_change_shows_the_service_message(admin_client):
    node = NodeFactory(name="before")
    response = admin_client.post(
        change_url(node),
        {"name": "a/b", "type": "folder", "description": "", "context": "{}", "expected_version": node.version},
        follow=True,
    )
    assert "must not contain" in response.content.decode()
    node.refresh_from_db()
    assert node.name == "before"


def test_a_stale_admin_change_is_a_conflict(admin_client):
    node = NodeFactory(name="before")
    response = admin_client.post(
        change_url(node),
        {"name": "after", "type": "folder", "description": "", "context": "{}", "expected_version": node.version + 1},
        follow=True,
    )
    assert "changed by someone else" in response.content.decode()
    assert Node.objects.get(pk=node.pk).name == "before"


def test_admin_delete_of_an_internal_folder_is_forbidden(admin_client, internal):
    folder = internal["references"]
    url = delete_url(folder)
    assert admin_client.get(url).status_code == 403
    assert admin_client.post(url, {"post": "yes"}).status_code == 403
    assert Node.objects.filter(pk=folder.pk).exists()


def test_the_bulk_delete_action_refuses_internal_folders(admin_client, internal):
    folder = internal["references"]
    response = admin_client.post(
        reverse("admin:memory_node_changelist"),
        {"action": "delete_selected", "_selected_action": [folder.pk], "post": "yes"},
    )
    assert Node.objects.filter(pk=folder.pk).exists()
    assert response.status_code == 403


def test_admin_delete_of_a_branch_goes_through_the_services(admin_client):
    folder = NodeFactory()
    document = DocumentFactory(parent=folder)
    parent_id = folder.parent_id
    response = admin_client.post(delete_url(folder), {"post": "yes"})
    assert response.status_code == 302
    assert not Node.objects.filter(pk__in=[folder.pk, document.pk]).exists()
    assert Node.objects.get(pk=parent_id).numchild == 0
    assert Node.objects.find_problems() == ([], [], [], [], [])


def test_the_bulk_delete_action_deletes_nested_selections(admin_client):
    folder = NodeFactory()
    document = DocumentFactory(parent=folder)
    admin_client.post(
        reverse("admin:memory_node_changelist"),
        {"action": "delete_selected", "_selected_action": [folder.pk, document.pk], "post": "yes"},
    )
    assert not Node.objects.filter(pk__in=[folder.pk, document.pk]).exists()
    assert Node.objects.find_problems() == ([], [], [], [], [])


def test_nodes_are_not_added_through_the_admin(admin_client):
    assert admin_client.get(reverse("admin:memory_node_add")).status_code == 403


def test_the_changelist_costs_the_same_queries_whatever_the_rows(admin_client, internal):
    url = reverse("admin:memory_node_changelist")
    parent = NodeFactory(name="deep")

    def queries_for(rows: int) -> int:
        while Node.objects.filter(type="document", name__startswith="row-").count() < rows:
            DocumentFactory(parent=parent, name=f"row-{Node.objects.count()}.md")
        with CaptureQueriesContext(connection) as captured:
            html = admin_client.get(url, {"type__exact": "document", "q": "row-"}).content.decode()
        assert html.count("/swarmstar/deep/row-") == rows
        return len(captured)

    assert queries_for(5) == queries_for(25)


def test_staff_read_searches_and_their_steps_but_cannot_change_them(admin_client, internal):
    from memory.models import SearchStep
    from tests.factories import SearchFactory, SearchStepFactory

    search = SearchFactory(questions=["Where is <b>it</b>?"])
    SearchStepFactory(search=search, kind=SearchStep.Kind.ROUTE, summary="Entered references.")

    listing = admin_client.get(reverse("admin:memory_search_changelist"))
    page = admin_client.get(reverse("admin:memory_search_change", args=[search.pk]))
    assert listing.status_code == 200 and page.status_code == 200
    assert "Entered references." in page.content.decode()
    assert admin_client.post(reverse("admin:memory_search_change", args=[search.pk]), {}).status_code == 403
    assert admin_client.get(reverse("admin:memory_search_add")).status_code == 403


# -- rights judged in the node's own space ---------------------------------------------------------

NODE_RIGHTS = ("memory.view_node", "memory.change_node", "memory.delete_node")


@pytest.fixture
def lab():
    return Space.objects.create(slug="lab", name="Lab")


def member_of(lab, role: str, *permissions: str):
    """A staff user (not a superuser) who owns `default` and has `role` in `lab`."""
    person = staff_with(*permissions)
    membership_set(space=lab, member=person, role=role)
    return person


def logged_in(client, person):
    client.force_login(person)
    return client


def describe(client, folder: Node, description: str):
    return client.post(change_url(folder), {"description": description, "expected_version": folder.version})


def test_a_staff_reader_of_another_space_cannot_describe_its_internal_folder(client, internal, lab):
    """An owner of `default` who only reads `lab`: their role in `default` counts for nothing there."""
    client = logged_in(client, member_of(lab, "reader", *NODE_RIGHTS))
    folder = selectors.node_internal_folder(space=lab, name="user")

    assert 'name="description"' not in client.get(change_url(folder)).content.decode()  # the form is read-only
    assert describe(client, folder, "Changed by a reader.").status_code == 403
    assert Node.objects.get(pk=folder.pk).description == folder.description
    assert Node.objects.get(pk=folder.pk).version == folder.version

    own = internal["user"]  # the same user owns `default`, and describes its folder
    assert describe(client, own, "Described by its owner.").status_code == 302
    assert Node.objects.get(pk=own.pk).description == "Described by its owner."


def test_an_editor_of_another_space_changes_its_nodes_but_not_its_internal_folders(client, lab):
    client = logged_in(client, member_of(lab, "editor", *NODE_RIGHTS))
    folder = selectors.node_internal_folder(space=lab, name="user")
    node = services.node_create(parent=folder, type="folder", name="before", by=system(lab))

    assert describe(client, folder, "Changed by an editor.").status_code == 403
    assert Node.objects.get(pk=folder.pk).version == folder.version
    response = client.post(
        change_url(node),
        {"name": "after", "type": "folder", "description": "", "context": "{}", "expected_version": node.version},
    )
    assert response.status_code == 302
    assert Node.objects.get(pk=node.pk).name == "after"


def test_a_staff_reader_of_another_space_deletes_none_of_its_nodes(client, lab):
    client = logged_in(client, member_of(lab, "reader", *NODE_RIGHTS))
    node = services.node_create(
        parent=selectors.node_internal_folder(space=lab, name="references"), type="folder", name="kept", by=system(lab)
    )

    assert client.post(delete_url(node), {"post": "yes"}).status_code == 403
    bulk = {"action": "delete_selected", "_selected_action": [node.pk], "post": "yes"}
    assert client.post(reverse("admin:memory_node_changelist"), bulk).status_code == 403
    assert Node.objects.filter(pk=node.pk).exists()


def test_a_staff_user_who_is_not_a_member_changes_nothing_of_the_space(client, lab):
    client = logged_in(client, staff_with(*NODE_RIGHTS))
    folder = selectors.node_internal_folder(space=lab, name="user")
    assert describe(client, folder, "Changed by a stranger.").status_code == 403
    assert Node.objects.get(pk=folder.pk).version == folder.version


def test_a_superuser_acts_as_an_owner_of_every_space(admin_client, staff, lab):
    """Django's superuser: every right, in every space, member or not (docs/spaces.md)."""

    folder = selectors.node_internal_folder(space=lab, name="user")
    assert describe(admin_client, folder, "Described by the site's operator.").status_code == 302
    assert Node.objects.get(pk=folder.pk).description == "Described by the site's operator."
    event = NodeEvent.objects.filter(node_id=folder.pk, action="update").get()
    assert (event.space_id, event.user_id) == (lab.pk, staff.pk)  # written and recorded in the folder's space
