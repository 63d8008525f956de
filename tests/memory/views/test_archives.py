import io
import re
import tarfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http.multipartparser import MultiPartParser
from django.test import Client
from django.urls import reverse

from memory import selectors, services
from memory.api.http import MULTIPART_SLACK_BYTES
from tests.archives import tar_gz, tar_members, zip_bytes
from tests.factories import NodeFactory, ProjectFactory, acting, default_space
from tests.memory.views.conftest import HTMX

pytestmark = pytest.mark.django_db

FILES = {"README.md": b"# demo\n", "src/app.py": b"print('hi')\n"}


def upload(client, project, blob, name="project.tar.gz", mode=None, shown=(), **extra):
    archive = SimpleUploadedFile(name, blob, content_type="application/octet-stream")
    data = {"archive": archive, **({"mode": mode} if mode else {}), "shown": list(shown)}
    return client.post(reverse("memory:project_upload", args=[project.pk]), data, **extra)


@pytest.mark.parametrize("pack, name", [(tar_gz, "p.tar.gz"), (zip_bytes, "p.zip")])
def test_upload_an_archive_into_a_project(user_client, pack, name):
    project = ProjectFactory()
    response = upload(user_client, project, pack(FILES), name, shown=[project.pk], **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Imported 2 files and 1 folder." in html
    assert f'id="children-{project.pk}" hx-swap-oob="true"' in html
    assert tar_members(services.project_export(project=project)) == FILES


def test_a_hostile_archive_is_refused_and_nothing_is_created(user_client):
    project = ProjectFactory()
    response = upload(user_client, project, tar_gz({"../escape.py": b"x"}), **HTMX)
    assert response.status_code == 400 and "no &#x27;..&#x27;" in response.content.decode()
    assert selectors.node_subtree(node=project, include_self=False).count() == 0


def test_an_archive_over_the_cap_is_refused(user_client, settings):
    settings.MEMSITE_ARCHIVE_MAX_BYTES = 10
    project = ProjectFactory()
    response = upload(user_client, project, tar_gz(FILES), **HTMX)
    assert response.status_code == 413


def test_an_oversized_body_is_refused_before_it_is_parsed(client, user, settings, monkeypatch):
    # With CSRF checks on, as in production, where the CSRF middleware would read request.POST.
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    settings.MEMSITE_ARCHIVE_MAX_BYTES = 1000
    project = ProjectFactory()

    def parse(self):
        raise AssertionError("the multipart body was parsed")

    monkeypatch.setattr(MultiPartParser, "parse", parse)
    response = upload(client, project, b"x" * (1000 + MULTIPART_SLACK_BYTES + 1), **HTMX)
    assert response.status_code == 413
    limit = 1000 + MULTIPART_SLACK_BYTES
    assert f"the limit is {limit} bytes" in response.content.decode()
    assert selectors.node_subtree(node=project, include_self=False).count() == 0


def test_an_upload_still_needs_its_csrf_token(user, settings):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    project = ProjectFactory()
    assert upload(client, project, tar_gz(FILES), **HTMX).status_code == 403
    client.get(reverse("memory:node_detail", args=[project.pk]))  # sets the CSRF cookie
    token = client.cookies[settings.CSRF_COOKIE_NAME].value
    response = upload(client, project, tar_gz(FILES), HTTP_X_CSRFTOKEN=token, **HTMX)
    assert response.status_code == 200 and "Imported 2 files" in response.content.decode()


def test_uploading_into_a_plain_folder_is_refused(user_client):
    folder = NodeFactory()
    response = upload(user_client, folder, tar_gz(FILES), **HTMX)
    assert response.status_code == 400 and "not a project root" in response.content.decode()


def test_uploading_without_a_file_is_refused(user_client):
    project = ProjectFactory()
    response = user_client.post(reverse("memory:project_upload", args=[project.pk]), {}, **HTMX)
    assert response.status_code == 400 and "Archive: This field is required." in response.content.decode()


def test_the_project_panel_offers_upload_and_download(user_client):
    project = ProjectFactory()
    html = user_client.get(reverse("memory:node_detail", args=[project.pk]), **HTMX).content.decode()
    assert reverse("memory:project_upload", args=[project.pk]) in html
    assert reverse("memory:project_download", args=[project.pk]) in html


def test_the_upload_form_offers_the_three_modes_fail_first(user_client):
    project = ProjectFactory()
    response = user_client.get(reverse("memory:node_detail", args=[project.pk]), **HTMX)
    html = response.content.decode()
    select = re.search(r'<select name="mode"[^>]*>(.*?)</select>', html, re.S).group(1)
    assert re.findall(r'<option value="(\w+)"( selected)?', select) == [
        ("fail", " selected"),
        ("merge", ""),
        ("replace", ""),
    ]
    assert "If the project has the archive&#x27;s paths" in html


def test_upload_updates_a_project_by_merge_then_replace(user_client):
    project = ProjectFactory()
    upload(user_client, project, tar_gz(FILES), **HTMX)
    changes = {"README.md": b"# new\n", "b.py": b"b"}
    response = upload(user_client, project, tar_gz(changes), **HTMX)
    assert response.status_code == 409
    assert "already has &#x27;README.md&#x27;" in response.content.decode()

    response = upload(user_client, project, tar_gz(changes), mode="merge", **HTMX)
    assert response.status_code == 200
    assert "Imported 1 file and 0 folders, updated 1 file." in response.content.decode()
    assert tar_members(services.project_export(project=project)) == {**FILES, **changes}

    blob = zip_bytes({"b.py": b"b"})  # b.py is 0600 in it: updated
    response = upload(user_client, project, blob, "p.zip", mode="replace", shown=[project.pk], **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Imported 0 files and 0 folders, updated 1 file, deleted 3 nodes." in html
    assert f'id="children-{project.pk}" hx-swap-oob="true"' in html

    response = upload(user_client, project, blob, "p.zip", mode="merge", **HTMX)
    assert "Nothing changed: the project already holds the archive&#x27;s 1 file." in response.content.decode()
    assert tar_members(services.project_export(project=project)) == {"b.py": b"b"}


def test_a_file_over_a_folder_is_refused_by_merge(user_client):
    project = ProjectFactory()
    upload(user_client, project, tar_gz(FILES), **HTMX)
    response = upload(user_client, project, tar_gz({"src": b"x"}), mode="merge", **HTMX)
    assert response.status_code == 409
    message = "&#x27;src&#x27; is a folder in the project but a file in the archive."
    assert message in response.content.decode()
    assert tar_members(services.project_export(project=project)) == FILES


def test_an_unknown_mode_is_refused(user_client):
    project = ProjectFactory()
    response = upload(user_client, project, tar_gz(FILES), mode="overwrite", **HTMX)
    assert response.status_code == 400
    message = "Select a valid choice. overwrite is not one of the available choices."
    assert message in response.content.decode()
    assert selectors.node_subtree(node=project, include_self=False).count() == 0


def test_a_project_file_shows_its_mode(user_client, user):
    project = ProjectFactory()
    blob = tar_gz({"run.sh": b"#!/bin/sh\n"}, modes={"run.sh": 0o755})
    services.project_import(project=project, archive=io.BytesIO(blob), by=acting(user))
    node = selectors.node_resolve(space=default_space(), path=f"/projects/{project.name}/run.sh")
    html = user_client.get(reverse("memory:node_detail", args=[node.pk]), **HTMX).content.decode()
    assert "<dt>Mode</dt><dd><code>0755</code></dd>" in html


def test_download_a_project_archive(user_client, user):
    project = ProjectFactory(name="todo api")
    services.project_import(project=project, archive=io.BytesIO(tar_gz(FILES)), by=acting(user))
    response = user_client.get(reverse("memory:project_download", args=[project.pk]))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/gzip"
    assert response["Content-Disposition"] == 'attachment; filename="todo api.tar.gz"'
    with tarfile.open(fileobj=io.BytesIO(response.getvalue()), mode="r:gz") as archive:
        assert sorted(archive.getnames()) == ["README.md", "src/app.py"]


def test_downloading_a_plain_folder_is_refused(user_client):
    response = user_client.get(reverse("memory:project_download", args=[NodeFactory().pk]))
    assert response.status_code == 400
