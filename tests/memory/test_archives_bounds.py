"""Project archives under the caps: hostile tar headers and zip directories are refused before
they are read, names are taken in NFC and fit a file system, imports write as they read and
exports stream, and a database lost during an import is a 503."""

import io
import os
import subprocess
import tarfile
import tracemalloc
import unicodedata
from collections.abc import Callable, Iterator

import psycopg
import pytest
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.signals import request_finished
from django.db import IntegrityError, OperationalError, connection
from django.urls import reverse

from memory import selectors, services
from memory.models import Node, NodeContent
from memory.services import archives
from memory.services import nodes as node_services
from memory.services.archive_formats import EXTENDED_HEADER_MAX_BYTES
from memory.services.archives import IMPORT_BYTES_PER_WRITE
from memory.services.nodes import (
    CONTENT_COLUMNS,
    CONTENT_TYPES,
    NodeSpec,
    content_values,
    insert_rows,
)
from memory.validation import fit_name
from memsite.errors import Conflict, InvalidInput, TooLarge
from memsite.middleware import DATABASE_UNAVAILABLE
from tests.archives import (
    patterned,
    pax_record,
    tar_extended,
    tar_file,
    tar_gz,
    tar_gz_raw,
    tar_gz_to,
    tar_members,
    zip_bytes,
    zip_of_zeros,
    zip_with_central_field,
    zip_with_comments,
    zip_without_utf8_flag,
)
from tests.factories import NodeFactory, ProjectFactory, acting, default_space
from tests.hardening.proxy import TcpProxy
from tests.memory.api.support import tree_state, url

pytestmark = pytest.mark.django_db

HUGE = 16 * 1024 * 1024  # a long name's claimed size: 16 KiB once gzipped
MiB = 1024 * 1024


def upload(api, project, blob: bytes, name: str = "archive.tar.gz"):
    handle = io.BytesIO(blob)
    handle.name = name
    return api.post(url("project-import", project), {"archive": handle}, format="multipart")


def peak_bytes(call: Callable[[], object]) -> tuple[object, int]:
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def import_refusal(project: Node, blob: bytes, user, error: type[Exception]) -> tuple[str, int]:
    """The message an import of `blob` is refused with (`error`), and the memory refusing took."""

    def refused() -> str:
        with pytest.raises(error) as refusal:
            services.project_import(project=project, archive=io.BytesIO(blob), by=acting(user))
        return refusal.value.message

    return peak_bytes(refused)


# -- long names and PAX headers ------------------------------------------------------------------


HOSTILE_HEADERS = {
    "gnu-long-name": lambda: tar_extended(tarfile.GNUTYPE_LONGNAME, b"a" * HUGE),
    "gnu-long-link": lambda: tar_extended(tarfile.GNUTYPE_LONGLINK, b"b" * HUGE),
    "pax-path": lambda: tar_extended(tarfile.XHDTYPE, pax_record("path", "c" * HUGE)),
    "pax-global": lambda: tar_extended(tarfile.XGLTYPE, pax_record("comment", "d" * HUGE)),
}


@pytest.mark.parametrize("kind", HOSTILE_HEADERS)
def test_a_huge_long_name_header_is_refused_before_it_is_read(api, kind):
    project = ProjectFactory()
    blob = tar_gz_raw(HOSTILE_HEADERS[kind](), tar_file("x.txt", b"x"))
    assert len(blob) < 64 * 1024
    upload(api, project, tar_gz({"warm-up.txt": b"w"}))  # imports made on first use are not counted
    before = tree_state()
    response, peak = peak_bytes(lambda: upload(api, project, blob))
    assert response.status_code == 400
    assert len(response.content) < 500
    assert f"the limit is {EXTENDED_HEADER_MAX_BYTES}" in response.json()["detail"]
    assert peak < 2 * MiB
    assert tree_state() == before


@pytest.mark.parametrize(
    "members, message",
    [
        ([tar_extended(tarfile.XHDTYPE, b"")] * 2000 + [tar_file("a.txt", b"a")], "headers in a row"),
        (
            [
                tar_extended(tarfile.XGLTYPE, b"".join(pax_record(f"k{i}", "v") for i in range(1000))),
                tar_file("a.txt", b"a"),
            ],
            "global PAX header has more than",
        ),
        (
            [
                tar_extended(tarfile.XHDTYPE, pax_record("GNU.sparse.map", ",".join(["1"] * 5000))),
                tar_file("a.txt", b"a"),
            ],
            "sparse files are refused",
        ),
        (
            [tar_extended(tarfile.XHDTYPE, pax_record("size", "-1")), tar_file("a.txt", b"a"), tar_file("b.txt", b"b")],
            "negative size",
        ),
    ],
    ids=["chained-headers", "global-attributes", "pax-sparse", "pax-negative-size"],
)
def test_extended_headers_are_bounded_in_number_and_kind(api, members, message):
    project = ProjectFactory()
    before = tree_state()
    response = upload(api, project, tar_gz_raw(*members))
    assert response.status_code == 400 and message in response.json()["detail"]
    assert tree_state() == before


def test_long_names_within_the_rules_import_in_gnu_and_pax_form(api):
    """A path of 400 characters, each part under 255 bytes, as GNU tar and PAX writers store it,
    with a `git archive` global header and a PAX header of 60 KB of attributes."""
    project = ProjectFactory()
    path = "d" * 200 + "/" + "f" * 200 + ".txt"
    gnu = tar_extended(tarfile.GNUTYPE_LONGNAME, path.encode() + b"\0") + tar_file("placeholder", b"gnu")
    attributes = pax_record("path", path.replace("f" * 200, "p" * 200)) + pax_record("comment", "e" * 60_000)
    pax = (
        tar_extended(tarfile.XGLTYPE, pax_record("comment", "0" * 40))
        + tar_extended(tarfile.XHDTYPE, attributes)
        + tar_file("placeholder", b"pax")
    )
    assert upload(api, project, tar_gz_raw(gnu, pax)).status_code == 201
    assert tar_members(services.project_export(project=project)) == {
        path: b"gnu",
        path.replace("f" * 200, "p" * 200): b"pax",
    }


def test_a_refused_name_is_quoted_short(api):
    project = ProjectFactory()
    name = "z" * 5000 + "\x07"
    response = upload(
        api, project, tar_gz_raw(tar_extended(tarfile.XHDTYPE, pax_record("path", name)), tar_file("p", b""))
    )
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert "must be at most 1024 characters" in detail and "(5001 characters)" in detail
    assert len(detail) < 300


def test_a_zip_of_more_entries_than_the_cap_is_refused_before_they_are_parsed(user, settings):
    """zipfile makes an object of every entry of the central directory: 50,000 empty names,
    4 MiB, would cost about 25 MiB before the cap counted them."""
    settings.MEMSITE_ARCHIVE_MAX_FILES = 100
    blob = zip_bytes({f"{i:x}": b"" for i in range(50_000)})
    project = ProjectFactory()

    message, peak = import_refusal(project, blob, user, TooLarge)
    assert "more than 100 files and folders" in message
    assert peak < 2 * len(blob)
    assert selectors.node_subtree(node=project, include_self=False).count() == 0


def test_a_zip_directory_over_its_bound_is_refused_before_zipfile_reads_it(user):
    """zipfile reads the central directory whole and copies every entry's comment and extra
    field: 100 empty files with 64 KiB comments, a 6.5 MB upload, cost twice that."""
    blob = zip_with_comments(100, 65_535)
    project = ProjectFactory()

    message, peak = import_refusal(project, blob, user, TooLarge)
    assert "(its zip directory) is 6" in message and "the limit is 4000000" in message
    assert peak < MiB
    assert selectors.node_subtree(node=project, include_self=False).count() == 0


# -- Unicode normalization -------------------------------------------------------------------------

NFD = unicodedata.normalize("NFD", "café/naïve.md")
NFC = unicodedata.normalize("NFC", NFD)


@pytest.mark.parametrize("pack", [tar_gz, zip_bytes, zip_without_utf8_flag], ids=["tar.gz", "zip", "zip-no-utf8-flag"])
def test_decomposed_names_import_in_nfc(api, pack):
    assert NFD != NFC
    project = ProjectFactory()
    response = upload(api, project, pack({NFD: b"# hi\n"}), "a.zip" if pack is not tar_gz else "a.tar.gz")
    assert response.status_code == 201, response.content
    node = selectors.node_resolve(space=default_space(), path=f"/projects/{project.name}/{NFC}")
    assert node.name == NFC.rpartition("/")[2] and node.context == {"file_path": NFC}
    assert tar_members(services.project_export(project=project)) == {NFC: b"# hi\n"}


def test_names_that_are_one_after_normalization_are_refused(api):
    project = ProjectFactory()
    before = tree_state()
    response = upload(api, project, tar_gz({NFD: b"1", NFC: b"2"}))
    assert response.status_code == 400 and "twice" in response.json()["detail"]
    assert tree_state() == before


# -- names within 255 bytes -------------------------------------------------------------------------

GREEK = "λ" * 128  # 128 characters, 256 bytes


def test_a_name_over_255_bytes_is_refused_by_the_api_the_dashboard_and_archives(api, client, user, internal):
    project = ProjectFactory()
    before = tree_state()
    response = api.post(
        url("node-create"), {"parent": internal["user"].pk, "type": "folder", "name": GREEK}, format="json"
    )
    assert response.status_code == 400 and "at most 255 bytes" in response.content.decode()
    client.force_login(user)
    page = client.post(
        reverse("memory:node_create", args=[internal["user"].pk]),
        {"type": "folder", "name": GREEK},
        HTTP_HX_REQUEST="true",
    )
    assert page.status_code == 400 and "at most 255 bytes" in page.content.decode()
    archive = upload(api, project, tar_gz({f"src/{GREEK}.py": b""}))
    assert archive.status_code == 400 and "at most 255 bytes" in archive.json()["detail"]
    assert tree_state() == before


def test_an_export_of_a_stored_over_long_name_extracts_with_gnu_tar(api, user, tmp_path):
    project = ProjectFactory()
    services.project_import(
        project=project, archive=io.BytesIO(tar_gz({"src/short.txt": b"keep", "b.txt": b"b"})), by=acting(user)
    )
    long_name = "é" * 255  # 510 bytes, stored before names were counted in bytes
    Node.objects.filter(name="short.txt").update(name=long_name, context={"file_path": f"src/{long_name}"})
    archive = tmp_path / "export.tar.gz"
    archive.write_bytes(api.get(url("project-export", project)).getvalue())
    out = tmp_path / "out"
    out.mkdir()
    done = subprocess.run(["tar", "-xzf", str(archive), "-C", str(out)], check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (extracted,) = (out / "src").iterdir()
    assert extracted.read_bytes() == b"keep" and len(os.fsencode(extracted.name)) <= 255
    assert extracted.name.startswith("é" * 100)
    assert (out / "b.txt").read_bytes() == b"b"


def test_fit_name_shortens_over_long_names_apart_and_keeps_the_extension():
    assert fit_name("short.md") == "short.md"
    first, second = fit_name("é" * 200 + "a.tar"), fit_name("é" * 200 + "b.tar")
    assert first != second
    for fitted in (first, second, fit_name("€" * 300)):
        assert len(fitted.encode()) <= 255 and "\ufffd" not in fitted
    assert first.startswith("é" * 100) and first.endswith(".tar")


# -- exports stream ---------------------------------------------------------------------------------


def project_with(files: dict[str, bytes], user) -> Node:
    """A project holding `files`, each a project file at its path under the folder `data`."""
    project = ProjectFactory()
    folder = services.node_create(parent=project, type="folder", name="data", by=acting(user))
    specs = [
        NodeSpec(name=path.rpartition("/")[2], type="project_file_bytes", context={"file_path": path}, content=data)
        for path, data in files.items()
    ]
    services.node_bulk_create(parent=folder, specs=specs, by=acting(user))
    return project


def project_of(size_mib: int, user) -> tuple[Node, dict[str, bytes]]:
    files = {f"data/{i:02}.bin": os.urandom(MiB) for i in range(size_mib)}
    return project_with(files, user), files


@pytest.mark.parametrize("where", ["api", "dashboard"])
def test_an_export_streams_in_flat_memory_and_is_complete(api, client, user, tmp_path, where):
    project, files = project_of(40, user)
    client.force_login(user)
    if where == "api":
        response = api.get(url("project-export", project))
    else:
        response = client.get(reverse("memory:project_download", args=[project.pk]))
    assert response.status_code == 200 and response.streaming
    target = tmp_path / "export.tar.gz"

    def download() -> int:
        chunks = 0
        with target.open("wb") as out:
            for chunk in response.streaming_content:
                out.write(chunk)
                chunks += 1
        return chunks

    chunks, peak = peak_bytes(download)
    assert peak < 40 * MiB / 5, f"{peak / MiB:.1f} MiB for a 40 MiB project"
    assert chunks > 40
    assert tar_members(target.read_bytes()) == files


def test_an_empty_project_exports_an_empty_archive(api):
    response = api.get(url("project-export", ProjectFactory()))
    assert response.status_code == 200 and tar_members(response.getvalue()) == {}


def file_node(project: Node, file_path: str) -> Node:
    return selectors.project_files(project=project).get(context__file_path=file_path)


def test_files_at_the_content_cap_export_a_slice_at_a_time(api, user, tmp_path):
    """Each file at the cap is read in slices cut by the database and sent as they come: the
    export's peak stays well under one such file, and the archive holds every file byte for byte,
    small ones (read in groups) between the large ones included."""
    cap = django_settings.MEMSITE_MAX_CONTENT_BYTES
    files = {}
    for number in range(4):
        files[f"data/{number}-large.bin"] = os.urandom(cap)
        files[f"data/{number}-small.txt"] = f"small {number}\n".encode()
    project = project_with(files, user)
    response = api.get(url("project-export", project))
    assert response.status_code == 200 and response.streaming
    target = tmp_path / "export.tar.gz"

    def download() -> None:
        with target.open("wb") as out:
            for chunk in response.streaming_content:
                out.write(chunk)

    _, peak = peak_bytes(download)
    assert peak < 6 * MiB, f"{peak / MiB:.1f} MiB to export files of {cap / MiB:.0f} MiB"
    assert tar_members(target.read_bytes()) == files


def test_a_large_file_changed_before_its_slices_begin_exports_as_it_is(user):
    before = {"data/a.bin": os.urandom(3 * MiB), "data/b.bin": os.urandom(3 * MiB)}
    project = project_with(before, user)
    chunks = services.project_export(project=project)
    first = next(chunks)  # the names and sizes are read, and a.bin's first slice
    after = os.urandom(5 * MiB // 2)
    services.node_content_set(node=file_node(project, "data/b.bin"), data=after, by=acting(user))
    assert tar_members([first, *chunks]) == {"data/a.bin": before["data/a.bin"], "data/b.bin": after}


def test_a_large_file_changed_while_its_slices_are_sent_cuts_the_export(user):
    """The header has given the size already: the export ends short, as a download a reader
    sees is incomplete, rather than sending a mix of the two versions."""
    project = project_with({"data/a.bin": os.urandom(3 * MiB)}, user)
    chunks = services.project_export(project=project)
    sent = [next(chunks)]
    services.node_content_set(node=file_node(project, "data/a.bin"), data=os.urandom(3 * MiB), by=acting(user))
    with pytest.raises(Conflict, match="'data/a.bin' changed while it was being exported"):
        sent.extend(chunks)
    with pytest.raises((EOFError, tarfile.ReadError)):
        tar_members(sent)


# -- a database lost during an import ------------------------------------------------------------


def test_a_driver_error_during_an_import_is_a_503(api, client, user, monkeypatch):
    """Any vendor: the bulk insert (COPY on PostgreSQL) runs on the driver's cursor, and raises
    psycopg's own error when the connection is cut."""
    project = ProjectFactory()
    before = tree_state()

    def cut(*args, **kwargs) -> None:
        raise psycopg.OperationalError("consuming input failed: server closed the connection unexpectedly")

    monkeypatch.setattr(node_services, "insert_rows", cut)
    response = upload(api, project, tar_gz({"a.txt": b"a"}))
    assert response.status_code == 503 and response.json() == {"detail": DATABASE_UNAVAILABLE}
    assert response["Retry-After"] == "5"
    client.force_login(user)
    archive = SimpleUploadedFile("a.tar.gz", tar_gz({"a.txt": b"a"}))
    page = client.post(reverse("memory:project_upload", args=[project.pk]), {"archive": archive})
    assert page.status_code == 503 and DATABASE_UNAVAILABLE in page.content.decode()
    assert tree_state() == before


@pytest.fixture
def proxied_postgres(transactional_db) -> Iterator[TcpProxy]:
    """This process's connection to PostgreSQL through a proxy the test can cut, with the
    internal folders the migration makes (a transactional test before this one emptied them)."""
    if connection.vendor != "postgresql":
        pytest.skip("A connection cut under COPY needs PostgreSQL: run with a postgres DATABASE_URL.")
    params = connection.settings_dict
    port = params["PORT"]
    with TcpProxy(params["HOST"] or "127.0.0.1", int(port or 5432)) as proxy:
        connection.close()
        params["PORT"] = proxy.port
        default_space()  # made again if emptied, and with it its internal folders
        try:
            yield proxy
        finally:
            connection.close()
            params["PORT"] = port


def cut_under_copy(proxy: TcpProxy, monkeypatch) -> None:
    """Kills the connection in the middle of the next COPY (as pg_terminate_backend or a restart
    would); new connections are taken again at once."""
    write_row = psycopg.Copy.write_row

    def kill_then_write(copy: psycopg.Copy, row) -> None:
        proxy.stop()
        proxy.start()
        write_row(copy, row)

    monkeypatch.setattr(psycopg.Copy, "write_row", kill_then_write)


def test_an_import_whose_connection_is_cut_under_copy_is_a_503(proxied_postgres, api, monkeypatch):
    project = ProjectFactory()
    before = tree_state()
    cut_under_copy(proxied_postgres, monkeypatch)
    response = upload(api, project, tar_gz({"a.txt": b"a", "b/c.txt": b"c"}))
    assert response.status_code == 503 and response.json() == {"detail": DATABASE_UNAVAILABLE}
    assert response["Retry-After"] == "5"
    monkeypatch.undo()
    assert tree_state() == before
    assert upload(api, project, tar_gz({"a.txt": b"a"})).status_code == 201  # and imports work again


# -- imports write as they read -----------------------------------------------------------------


def about_100_mib() -> list[tuple[str, int]]:
    """Paths and sizes: files at the content cap (each written alone), 1 MiB ones between them
    (several to a write), small and empty ones, in nested folders; 98 MiB in all."""
    cap = django_settings.MEMSITE_MAX_CONTENT_BYTES
    spread = []
    for number in range(7):
        spread.append((f"big/{number}.bin", cap))
        spread += [(f"mid/{number}/{part}.bin", MiB) for part in range(4)]
        spread.append((f"small/{number}/notes.txt", 1000 + number))
    return [*spread, ("empty.txt", 0)]


def import_bound(largest_write: int) -> int:
    """The most an import may hold at once: one write's data, the driver's copy of it as it goes
    out (psycopg formats each COPY row into a buffer of its own and sends that in slices; SQLite
    copies with an allocator tracemalloc does not see), and 4 MiB for the rest: a slice of a
    member held three times over while it is read (under 1 MiB), the list of members, the
    request."""
    return 2 * largest_write + 4 * MiB


def assert_stored(project: Node, spread: list[tuple[str, int]]) -> None:
    """The project holds exactly these files, each byte for byte, in a sound tree."""
    stored = dict(selectors.project_files(project=project).values_list("context__file_path", "pk"))
    assert sorted(stored) == sorted(path for path, _ in spread)
    for path, size in spread:
        content = NodeContent.objects.get(node_id=stored[path])
        assert (content.size, bytes(content.data)) == (size, patterned(path, size)), path
    assert Node.objects.find_problems() == ([], [], [], [], [])


def test_an_import_writes_as_it_reads_in_bounded_memory(api, tmp_path):
    """A 250 KB upload within every cap that unpacks to 98 MiB. The import holds one group of
    files' data at a time: at most IMPORT_BYTES_PER_WRITE, or one file at the content cap alone.
    Before, it held the upload and every file's data at once: 98 MiB at least."""
    spread = about_100_mib()
    files = ((path, patterned(path, size)) for path, size in spread)
    blob = tar_gz_to(tmp_path / "spread.tar.gz", files, compresslevel=9).read_bytes()
    assert len(blob) < MiB and sum(size for _, size in spread) > 95 * MiB
    upload(api, ProjectFactory(), tar_gz({"warm-up.txt": b"w"}))  # imports made on first use are not counted
    project = ProjectFactory()
    response, peak = peak_bytes(lambda: upload(api, project, blob))
    assert response.status_code == 201, response.content
    assert response.json() == {"folders": 17, "files": len(spread), "updated": 0, "deleted": 0}
    assert peak < import_bound(max(IMPORT_BYTES_PER_WRITE, django_settings.MEMSITE_MAX_CONTENT_BYTES)), (
        f"{peak / MiB:.1f} MiB"
    )
    assert_stored(project, spread)


def test_an_upload_is_read_from_its_file_never_whole(user, tmp_path):
    """A 20 MiB upload that does not compress, opened where Django spools it (on disk): each of
    its 5 MiB files is a write of its own, read a slice at a time. Before, the upload was read
    into memory whole, then every file's data beside it."""
    files = {f"random/{number}.bin": os.urandom(5 * MiB) for number in range(4)}
    path = tar_gz_to(tmp_path / "random.tar.gz", files.items())
    assert path.stat().st_size > 20 * MiB
    project = ProjectFactory()
    with path.open("rb") as archive:
        result, peak = peak_bytes(lambda: services.project_import(project=project, archive=archive, by=acting(user)))
    assert (result.folders, result.files) == (1, 4)
    assert peak < import_bound(5 * MiB), f"{peak / MiB:.1f} MiB"
    assert tar_members(services.project_export(project=project)) == files


LAST = "part/7.bin"
HALF_WAY = {
    "zip-bad-checksum": (lambda files: zip_with_central_field(zip_bytes(files), LAST, "crc", 0), 400, "Bad CRC-32"),
    # The member holds 3 MiB where it declares 1 KiB: no more than that is unpacked.
    "zip-longer-than-declared": (
        lambda files: zip_with_central_field(zip_bytes(files), LAST, "file_size", 1024),
        400,
        "Bad CRC-32",
    ),
    "database-lost": (tar_gz, 503, DATABASE_UNAVAILABLE),
}


@pytest.mark.parametrize("failure", HALF_WAY)
def test_a_member_failing_half_way_leaves_nothing(api, monkeypatch, failure):
    """Eight files of 3 MiB, written two at a time: the last fails once three writes are done."""
    files = {f"part/{number}.bin": patterned(f"part/{number}.bin", 3 * MiB) for number in range(8)}
    pack, status, message = HALF_WAY[failure]
    writes = []

    def counted(model, fields, rows, **kwargs) -> None:
        writes.append(len(rows))
        if failure == "database-lost" and len(writes) == 4:
            raise OperationalError("server closed the connection unexpectedly")
        insert_rows(model, fields, rows, **kwargs)

    monkeypatch.setattr(archives, "insert_rows", counted)
    project = ProjectFactory()
    blob = pack(files)
    before = tree_state()
    response = upload(api, project, blob, "a.zip" if failure.startswith("zip") else "a.tar.gz")
    assert response.status_code == status and message in response.json()["detail"]
    assert writes[:3] == [2, 2, 2]
    assert tree_state() == before


def test_a_member_longer_than_declared_is_not_unpacked(user):
    """100 MiB of zeros deflate to 100 KB; the member declares 1 KiB of them."""
    blob = zip_with_central_field(zip_of_zeros("zeros.bin", 100), "zeros.bin", "file_size", 1024)
    project = ProjectFactory()

    message, peak = import_refusal(project, blob, user, InvalidInput)
    assert "Bad CRC-32" in message and peak < 2 * MiB
    assert selectors.node_subtree(node=project, include_self=False).count() == 0


# -- the bulk insert's errors are Django's -------------------------------------------------------


@pytest.fixture
def postgres() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("COPY runs only on PostgreSQL: run with a postgres DATABASE_URL.")


def test_a_constraint_broken_under_copy_is_djangos_integrity_error(postgres):
    """Callers catch django.db.IntegrityError (a name taken meanwhile is a 409): the driver's
    own error from a COPY got past them."""
    node = NodeFactory()
    insert_rows(NodeContent, CONTENT_COLUMNS, [content_values(node.pk, b"a")], types=CONTENT_TYPES)
    with pytest.raises(IntegrityError):
        insert_rows(NodeContent, CONTENT_COLUMNS, [content_values(node.pk, b"b")], types=CONTENT_TYPES)


def test_a_connection_cut_under_copy_is_dropped_before_the_next_request(proxied_postgres, monkeypatch):
    """Persistent connections without health checks: Django drops a connection at the end of a
    request only if it saw it fail. A COPY outside a transaction (as the benchmarks load rows)
    left it in place, and the next request failed on it."""
    monkeypatch.setitem(connection.settings_dict, "CONN_HEALTH_CHECKS", False)
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", 60)
    node = NodeFactory()
    write_row = psycopg.Copy.write_row
    cut_under_copy(proxied_postgres, monkeypatch)
    with pytest.raises(OperationalError):
        insert_rows(NodeContent, CONTENT_COLUMNS, [content_values(node.pk, b"a")], types=CONTENT_TYPES)
    monkeypatch.setattr(psycopg.Copy, "write_row", write_row)
    request_finished.send(sender=None)
    assert Node.objects.filter(pk=node.pk).exists()
