"""What benchmarks/tree.py measures: the tree's reads and writes through memory.services and
memory.selectors against a plain adjacency-list table holding the same tree, and the children
endpoint under gunicorn. Imported once the script has set Django up on its scratch database."""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.urls import Resolver404, resolve

from benchmarks.corpora import treeshape
from benchmarks.kit.harness import (
    Report,
    Row,
    Scratch,
    command,
    database_version,
    gunicorn,
    http_load,
    machine,
    refresh_statistics,
    time_each,
)
from memory import selectors, services
from memory.models import Node
from memsite.spaces.logic import Role
from memsite.spaces.models import Space
from memsite.spaces.principals import system_principal
from memsite.spaces.selectors import space_default
from memsite.spaces.services import membership_set, token_create

PAGE = 100
READ_TARGET_MS = 10
MOVE_TARGET_MS = 2_000
API_TARGET_MS = 50
IMPORT_TARGET_RATE = 20_000
WARMUP = 20


def run(args: argparse.Namespace, scratch: Scratch, *, default_nodes: int) -> Report:
    load = os.getloadavg()[0]  # other work on the machine shows up in every number below
    total = args.nodes or default_nodes
    built, seconds = treeshape.build_chunks(treeshape.plan(total, discarded=args.deletes), space=space_default())
    adjacency = Adjacency.copy_of_memsite()
    refresh_statistics(scratch.vendor, ("memory_node", "memory_nodecontent", Adjacency.TABLE))
    fixtures = Fixtures.sample(args)

    report = Report(title=f"Tree benchmark on {database_version(scratch.vendor)}, {total:,} nodes")
    rate = built / seconds
    report.preamble = [
        f"{machine(load)}; {total:,} nodes plus {built - total:,} built for the delete benchmark.",
        "",
        f"Bulk import through `node_bulk_create`: {built:,} nodes in {seconds:.1f} s = "
        f"**{rate:,.0f} nodes/s** (target ≥ {IMPORT_TARGET_RATE:,}: "
        f"{'✓' if rate >= IMPORT_TARGET_RATE else '✗'}).",
        "",
        f"Command: `{command('tree')}`",
    ]
    for operation in operations(fixtures, adjacency):
        print(f"timing: {operation.name}", file=sys.stderr)
        report.rows.append(measure(operation))
    report.notes = notes(fixtures, scratch.vendor)
    api_row, api_note = measure_api(args, scratch, fixtures)
    if api_row:
        report.rows.append(api_row)
    report.notes.append(api_note)
    return report


# --- the baseline -----------------------------------------------------------------------------


class Adjacency:
    """The plain alternative: (id, parent_id, name) rows, children by parent_id, ancestors and
    subtrees by recursive CTE, paths resolved one level at a time. Same ids as memsite."""

    TABLE = "bench_adjacency"
    ANCESTORS = f"""
        WITH RECURSIVE up(id, parent_id, name, level) AS (
            SELECT id, parent_id, name, 0 FROM {TABLE} WHERE id = %s
            UNION ALL
            SELECT a.id, a.parent_id, a.name, up.level + 1 FROM {TABLE} a JOIN up ON a.id = up.parent_id
        )
        SELECT id, parent_id, name FROM up WHERE level > 0 ORDER BY level DESC"""
    SUBTREE = f"""
        WITH RECURSIVE down(id, parent_id, name) AS (
            SELECT id, parent_id, name FROM {TABLE} WHERE id = %s
            UNION ALL
            SELECT a.id, a.parent_id, a.name FROM {TABLE} a JOIN down ON a.parent_id = down.id
        )"""

    @classmethod
    def copy_of_memsite(cls) -> Adjacency:
        # Indexes after the copy, as anyone loading a table would do.
        statements = [
            f"DROP TABLE IF EXISTS {cls.TABLE}",
            f"CREATE TABLE {cls.TABLE} "
            "(id varchar(39) PRIMARY KEY, parent_id varchar(39) NULL, name varchar(255) NOT NULL)",
            f"INSERT INTO {cls.TABLE} (id, parent_id, name) SELECT id, parent_id, name FROM memory_node",
            f"CREATE INDEX {cls.TABLE}_parent ON {cls.TABLE} (parent_id)",
            f"CREATE UNIQUE INDEX {cls.TABLE}_parent_name ON {cls.TABLE} (parent_id, name)",
        ]
        with connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)
        return cls()

    def _rows(self, sql: str, *params: object) -> list[tuple]:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()

    def children(self, node_id: str) -> list[tuple]:
        return self._rows(
            f"SELECT id, parent_id, name FROM {self.TABLE} WHERE parent_id = %s ORDER BY name LIMIT {PAGE}", node_id
        )

    def ancestors(self, node_id: str) -> list[tuple]:
        return self._rows(self.ANCESTORS, node_id)

    def subtree(self, node_id: str) -> list[tuple]:
        return self._rows(f"{self.SUBTREE} SELECT id, parent_id, name FROM down", node_id)

    def resolve(self, path: str) -> str | None:
        names = [name for name in path.split("/") if name]
        rows = self._rows(f"SELECT id FROM {self.TABLE} WHERE parent_id IS NULL AND name = %s", names[0])
        for name in names[1:]:
            if not rows:
                return None
            rows = self._rows(f"SELECT id FROM {self.TABLE} WHERE parent_id = %s AND name = %s", rows[0][0], name)
        return rows[0][0] if rows else None

    @transaction.atomic
    def create(self, parent_id: str, name: str) -> None:
        self._rows(f"SELECT id FROM {self.TABLE} WHERE id = %s", parent_id)
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {self.TABLE} (id, parent_id, name) VALUES (%s, %s, %s)",
                (f"memory_{uuid.uuid4().hex}", parent_id, name),
            )

    @transaction.atomic
    def move(self, node_id: str, new_parent_id: str) -> None:
        # The check every tree move needs: the new parent must not be inside the moved branch.
        if any(row[0] == node_id for row in self.ancestors(new_parent_id)):
            raise ValueError("cannot move a branch into itself")
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE {self.TABLE} SET parent_id = %s WHERE id = %s", (new_parent_id, node_id))

    @transaction.atomic
    def delete(self, node_id: str) -> None:
        with connection.cursor() as cursor:
            cursor.execute(f"{self.SUBTREE} DELETE FROM {self.TABLE} WHERE id IN (SELECT id FROM down)", (node_id,))


# --- what is timed ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Fixtures:
    space: Space  # the one the tree was built in
    folders: list[Node]  # folders of 10–50 children
    hot_folders: list[Node]  # as many samples, cycling over the 10,000-child folders
    deep_nodes: list[Node]  # depth 6
    deep_paths: list[str]  # the readable paths of deep_nodes
    branches: list[Node]  # subjects: folders of a few hundred nodes
    new_documents: list[tuple[Node, str]]  # (folder, name)
    movable: Node
    move_targets: list[Node]  # alternating, so the branch goes back and forth
    discarded: list[Node]

    @classmethod
    def sample(cls, args: argparse.Namespace) -> Fixtures:
        n, space = args.samples, space_default()
        references = selectors.node_resolve(space=space, path="/references")
        under = Node.objects.filter(path__startswith=references.path)
        deep_nodes = random_sample(under.filter(depth=6), n)
        folders = random_sample(under.filter(depth=5, is_folder=True), n)
        hot = [selectors.node_resolve(space=space, path=path) for path in treeshape.hot_folder_paths()]
        move_a, move_b = (selectors.node_resolve(space=space, path=p) for p in (treeshape.MOVES_A, treeshape.MOVES_B))
        return cls(
            space=space,
            folders=folders,
            hot_folders=list(itertools.islice(itertools.cycle(hot), n)),
            deep_nodes=deep_nodes,
            deep_paths=[selectors.node_path(node=node) for node in deep_nodes],
            branches=random_sample(under.filter(depth=4), min(n, 100)),
            new_documents=[(folder, f"new-note-{uuid.uuid4().hex[:12]}.md") for folder in reversed(folders)],
            movable=selectors.node_resolve(space=space, path=treeshape.MOVABLE),
            move_targets=[move_b if i % 2 == 0 else move_a for i in range(args.moves)],
            discarded=[selectors.node_resolve(space=space, path=p) for p in treeshape.discarded_paths(args.deletes)],
        )


def random_sample(queryset, n: int) -> list[Node]:
    return list(queryset.order_by("?")[:n])


@dataclass(frozen=True)
class Operation:
    """One line of the table: the same samples fed to memsite and to the baseline."""

    name: str
    samples: Sequence[Any]
    memsite: Callable[[Any], object]
    baseline: Callable[[Any], object]
    warmup: int = 0  # reads only: writes cannot be repeated
    target_ms: float | None = None


def operations(f: Fixtures, adjacency: Adjacency) -> list[Operation]:
    return [*read_operations(f, adjacency), *write_operations(f, adjacency)]


def read_operations(f: Fixtures, adjacency: Adjacency) -> list[Operation]:
    def children_page(node: Node) -> list[Node]:
        return list(selectors.node_children(node=node)[:PAGE])

    branch_size = selectors.node_subtree(node=f.branches[0]).count()
    return [
        Operation(
            f"children of a {_children_range(f.folders)}-child folder, first {PAGE}",
            f.folders,
            children_page,
            lambda node: adjacency.children(node.pk),
            WARMUP,
            READ_TARGET_MS,
        ),
        Operation(
            f"children of a {f.hot_folders[0].numchild:,}-child folder, first {PAGE}",
            f.hot_folders,
            children_page,
            lambda node: adjacency.children(node.pk),
            WARMUP,
            READ_TARGET_MS,
        ),
        Operation(
            "ancestors of a depth-6 node",
            f.deep_nodes,
            lambda node: list(selectors.node_ancestors(node=node)),
            lambda node: adjacency.ancestors(node.pk),
            WARMUP,
            READ_TARGET_MS,
        ),
        Operation(
            "resolve a depth-6 readable path",
            f.deep_paths,
            lambda path: selectors.node_resolve(space=f.space, path=path),
            adjacency.resolve,
            WARMUP,
            READ_TARGET_MS,
        ),
        Operation(
            f"subtree of a folder (e.g. {branch_size} nodes)",
            f.branches,
            lambda node: list(selectors.node_subtree(node=node)),
            lambda node: adjacency.subtree(node.pk),
            WARMUP,
        ),
    ]


def write_operations(f: Fixtures, adjacency: Adjacency) -> list[Operation]:
    def create_document(sample: tuple[Node, str]) -> Node:
        folder, name = sample
        return services.node_create(
            parent=folder,
            type="document",
            name=name,
            description="A note written during the benchmark.",
            content=b"# New note\n\nWritten by benchmarks/tree.py.\n",
            by=system_principal(space_default()),
        )

    return [
        Operation(
            "create a document",
            f.new_documents,
            create_document,
            lambda sample: adjacency.create(sample[0].pk, sample[1]),
        ),
        Operation(
            f"move a {selectors.node_subtree(node=f.movable).count():,}-node branch",
            f.move_targets,
            lambda target: services.node_move(node=f.movable, parent=target, by=system_principal(space_default())),
            lambda target: adjacency.move(f.movable.pk, target.pk),
            target_ms=MOVE_TARGET_MS,
        ),
        Operation(
            f"delete a {selectors.node_subtree(node=f.discarded[0]).count()}-node branch",
            f.discarded,
            lambda node: services.node_delete(node=node, by=system_principal(space_default())),
            lambda node: adjacency.delete(node.pk),
        ),
    ]


def _children_range(folders: Sequence[Node]) -> str:
    counts = [folder.numchild for folder in folders]
    return f"{min(counts)}–{max(counts)}"


def measure(operation: Operation) -> Row:
    target = f"p95 ≤ {operation.target_ms:,.0f} ms" if operation.target_ms else ""
    return Row(
        operation=operation.name,
        memsite=time_each(operation.memsite, operation.samples, warmup=operation.warmup),
        baseline=time_each(operation.baseline, operation.samples, warmup=operation.warmup),
        target=target,
        target_ms=operation.target_ms,
    )


def notes(f: Fixtures, vendor: str) -> list[str]:
    lines = [
        "memsite: `memory.selectors` and `memory.services` as the API calls them, full rows "
        "(the selectors' model instances with content size); writes in their own transaction.",
        "baseline: a table `(id, parent_id, name)` with indexes on `parent_id` and "
        "`(parent_id, name)` holding the same tree and ids; ancestors and subtrees by recursive "
        "CTE, children by `parent_id` ordered by name, resolve one query per level, writes in "
        "a transaction. It reads 3 columns where memsite reads whole nodes.",
        "ratio = baseline p50 / memsite p50: above 1 means memsite is faster.",
        f"Reads: {len(f.folders)} samples each after {WARMUP} untimed; the big-folder "
        f"row cycles over {treeshape.HOT_FOLDER_COUNT} such folders. The move alternates the "
        f"branch between two folders ({len(f.move_targets)} moves); each delete removes a "
        "different branch.",
    ]
    if vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_size_pretty(pg_total_relation_size('memory_node')), "
                f"pg_size_pretty(pg_total_relation_size('{Adjacency.TABLE}'))"
            )
            memsite_size, baseline_size = cursor.fetchone()
        lines.append(f"Size with indexes: memory_node {memsite_size}, baseline table {baseline_size}.")
    return lines


# --- over HTTP --------------------------------------------------------------------------------


def measure_api(args: argparse.Namespace, scratch: Scratch, f: Fixtures) -> tuple[Row | None, str]:
    urls = [f"/api/nodes/{folder.pk}/children/" for folder in f.folders]
    try:
        resolve(urls[0])
    except Resolver404:
        return None, "GET /api/nodes/{id}/children/ not measured: the endpoint does not exist yet."
    user = get_user_model().objects.create_user(username=f"bench-{uuid.uuid4().hex[:8]}")
    membership_set(space=space_default(), member=user, role=Role.EDITOR)
    token = token_create(member=user, space=space_default(), name="tree benchmark")
    connection.close()  # gunicorn's workers and this process should not share anything
    with gunicorn(scratch.env, workers=args.api_workers, threads=args.api_threads) as port:
        result = http_load(
            port,
            urls,
            {"Authorization": f"Token {token.key}"},
            connections=args.api_connections,
            seconds=args.api_seconds,
        )
    row = Row(
        operation=f"GET /api/nodes/{{id}}/children/, {args.api_connections} connections",
        memsite=result.stats,
        target=f"p95 ≤ {API_TARGET_MS} ms",
        target_ms=API_TARGET_MS,
    )
    note = (
        f"HTTP: gunicorn gthread, {args.api_workers} workers × {args.api_threads} threads on "
        f"127.0.0.1, {args.api_connections} keep-alive client threads in this process for "
        f"{result.seconds:.0f} s over the {len(urls)} sampled folders: {result.requests:,} requests, "
        f"{result.rate:,.0f} req/s, {result.errors} errors."
    )
    return row, note
