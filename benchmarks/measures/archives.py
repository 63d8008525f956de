"""What benchmarks/archives.py measures: imports, merges, replaces and exports of a project
archive against deleting the project and importing it again. Imported once Django is set up."""

from __future__ import annotations

import argparse
import io
import random
import tarfile
from collections.abc import Iterable

from benchmarks.kit.harness import Report, Row, time_each
from memory import selectors, services
from memsite.spaces.principals import system_principal
from memsite.spaces.selectors import space_default

CHANGED_SHARE = 0.1  # of the files, changed by a merge and swapped by a replace


WORDS = "def return self value index node path text import for in if else name data read write".split()


def source_text(rng: random.Random, size: int) -> bytes:
    """Lines of code's length (six to ten words), `size` bytes in all."""
    lines, length = [], 0
    while length < size:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 10)))
        lines.append(line)
        length += len(line) + 1
    return "\n".join(lines).encode()[:size]


def files_of(count: int, size: int, *, seed: int) -> dict[str, tuple[bytes, int]]:
    """A repository's shape: files in folders two deep, one in ten executable."""
    rng = random.Random(seed)
    return {
        f"pkg{index % 20}/mod{index % 7}/file{index}.py": (source_text(rng, size), 0o755 if index % 10 == 0 else 0o644)
        for index in range(count)
    }


def changed(files: dict[str, tuple[bytes, int]], *, seed: int) -> dict[str, tuple[bytes, int]]:
    """The same files, a tenth of them with new text."""
    rng = random.Random(seed)
    every = round(1 / CHANGED_SHARE)
    return {
        path: (source_text(rng, len(data)), mode) if index % every == 0 else (data, mode)
        for index, (path, (data, mode)) in enumerate(files.items())
    }


def swapped(files: dict[str, tuple[bytes, int]]) -> dict[str, tuple[bytes, int]]:
    """A tenth of the files gone, and as many new ones in their folders."""
    every = round(1 / CHANGED_SHARE)
    kept = {path: value for index, (path, value) in enumerate(files.items()) if index % every}
    new = {
        path.replace("/file", "/new"): value for index, (path, value) in enumerate(files.items()) if not index % every
    }
    return {**kept, **new}


def tar_gz(files: dict[str, tuple[bytes, int]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path, (data, mode) in files.items():
            info = tarfile.TarInfo(path)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def run(args: argparse.Namespace) -> Report:
    projects = selectors.node_resolve(space=space_default(), path="/projects")
    files = files_of(args.files, args.file_bytes, seed=1)
    archives = {"a": tar_gz(files), "changed": tar_gz(changed(files, seed=2)), "swapped": tar_gz(swapped(files))}
    count = iter(range(1_000_000))

    def new_project():
        return services.node_create(
            parent=projects, type="project_root_folder", name=f"p{next(count)}", by=system_principal(space_default())
        )

    def load(project, archive: str, mode: str = "fail") -> None:
        services.project_import(
            project=project, archive=io.BytesIO(archives[archive]), mode=mode, by=system_principal(space_default())
        )

    def delete_and_import(_sample) -> None:
        services.node_delete(node=held[0], by=system_principal(space_default()))
        held[0] = new_project()
        load(held[0], "a")

    held = [new_project()]
    load(held[0], "a")
    baseline = time_each(delete_and_import, range(args.samples))
    alternating = ["changed", "a"] * args.samples
    swapping = ["swapped", "a"] * args.samples
    rows = [
        Row("import into a new project", time_each(lambda _: load(new_project(), "a"), range(args.samples))),
        Row("merge, nothing changed", time_each(lambda _: load(held[0], "a", "merge"), range(args.samples)), baseline),
        Row("merge, a tenth changed", time_each(lambda name: load(held[0], name, "merge"), alternating), baseline),
        Row("replace, a tenth swapped", time_each(lambda name: load(held[0], name, "replace"), swapping), baseline),
        Row("export", time_each(lambda _: _drain(services.project_export(project=held[0])), range(args.samples))),
    ]
    return Report(
        f"Project archives: {args.files:,} files of {args.file_bytes:,} bytes "
        f"({len(archives['a']) / 2**20:.1f} MiB gzipped)",
        preamble=["Baseline: delete the project and import the archive again, the one update there was before."],
        rows=rows,
    )


def _drain(pieces: Iterable[object]) -> None:
    for _ in pieces:
        pass
