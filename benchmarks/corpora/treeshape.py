"""The benchmark tree, produced as chunks of `NodeSpec`s that `node_bulk_create` inserts one at a
time, so that at most one chunk (about 10,000 nodes) is held in memory.

    /references/<area>/<topic>/<subject>/<collection>/<note>.md      depth 6, fan-out 10–50
    /swarmstar/journals/agent-N/entry-NNNNN.md                        the 10,000-child folders
    /swarmstar/moves-a/movable-branch/...                             a 10,001-node branch to move
    /swarmstar/trash/discarded-NNN/...                                301-node branches to delete

The random generator is seeded, so the same arguments build the same tree. `build_chunks` builds
it (or any other tree given as chunks) and times the service."""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from memory import selectors, services
from memory.models import Node
from memory.services import NodeSpec
from memsite.spaces.models import Space
from memsite.spaces.principals import system_principal

WORDS = (
    "agents",
    "alignment",
    "benchmarks",
    "caching",
    "compilers",
    "consensus",
    "databases",
    "deployment",
    "embeddings",
    "evaluation",
    "feedback",
    "graphs",
    "indexing",
    "inference",
    "kernels",
    "latency",
    "logging",
    "memory",
    "metrics",
    "networking",
    "optimizers",
    "parsing",
    "planning",
    "privacy",
    "profiling",
    "prompts",
    "queues",
    "ranking",
    "reasoning",
    "recall",
    "replication",
    "retrieval",
    "routing",
    "sandboxing",
    "scheduling",
    "search",
    "security",
    "sharding",
    "storage",
    "streaming",
    "summaries",
    "testing",
    "tokenizers",
    "tools",
    "tracing",
    "training",
    "transactions",
    "vectors",
    "workflows",
    "wrappers",
)

JOURNALS = "/swarmstar/journals"
MOVES_A = "/swarmstar/moves-a"
MOVES_B = "/swarmstar/moves-b"
MOVABLE = f"{MOVES_A}/movable-branch"
TRASH = "/swarmstar/trash"
HOT_FOLDER_COUNT = 3
MOVABLE_FOLDERS = 40
# Below /references: (level name, fan-out range) from the topics down to the notes.
LEVELS = (("topic", (10, 20)), ("subject", (10, 20)), ("collection", (10, 20)), ("note", (10, 50)))
DISCARDED_SHAPE = (10, 29)  # 10 folders of 29 notes: 301 nodes a branch


@dataclass(frozen=True)
class Chunk:
    parent_path: str  # the readable path of a folder that exists by the time the chunk is built
    specs: list[NodeSpec]
    size: int  # nodes in the chunk, counting every descendant


class Budget:
    """How many nodes may still be created; generators stop adding children at zero."""

    def __init__(self, nodes: int) -> None:
        self.left = nodes

    def take(self) -> bool:
        if self.left <= 0:
            return False
        self.left -= 1
        return True


def size(spec: NodeSpec) -> int:
    return 1 + sum(size(child) for child in spec.children)


def folder(name: str, description: str, children: list[NodeSpec] | None = None) -> NodeSpec:
    return NodeSpec(name=name, type="folder", description=description, children=children or [])


def note(rng: random.Random, name: str, about: str) -> NodeSpec:
    other = rng.choice(WORDS)
    return NodeSpec(
        name=name,
        type="document",
        description=f"Notes on {about} and {other}: what we tried, what worked, what to read next.",
        content=(f"# {about} and {other}\n\n- Observation {rng.randint(1, 999)}\n- Follow-up: {other}\n").encode(),
    )


def hot_folder_paths() -> list[str]:
    return [f"{JOURNALS}/agent-{k}" for k in range(1, HOT_FOLDER_COUNT + 1)]


def discarded_paths(count: int) -> list[str]:
    return [f"{TRASH}/discarded-{i:03d}" for i in range(count)]


def plan(total: int, *, discarded: int, seed: int = 42) -> Iterator[Chunk]:
    """Chunks in build order: `total` nodes of tree, then `discarded` extra branches that the
    delete benchmark consumes."""
    rng = random.Random(seed)
    hot_children = min(10_000, max(10, total // 10))
    movable_size = min(10_001, max(MOVABLE_FOLDERS * 2 + 1, total // 10 + 1))

    containers = [folder(name, f"Benchmark fixtures: {name}.") for name in ("journals", "moves-a", "moves-b")]
    yield Chunk("/swarmstar", containers, len(containers))
    for path in hot_folder_paths():
        yield _hot_folder(rng, path, hot_children)
    yield _movable_branch(rng, movable_size)

    budget = Budget(total - len(containers) - HOT_FOLDER_COUNT * (hot_children + 1) - movable_size)
    yield from _references(rng, budget)

    if discarded:
        yield Chunk("/swarmstar", [folder("trash", "Branches the delete benchmark removes.")], 1)
        for path in discarded_paths(discarded):
            yield _discarded_branch(rng, path)


def _hot_folder(rng: random.Random, path: str, children: int) -> Chunk:
    agent = path.rsplit("/", 1)[1]
    entries = [note(rng, f"entry-{i:05d}.md", f"{agent} step {i}") for i in range(1, children + 1)]
    spec = folder(agent, f"The journal of {agent}: one entry per step.", entries)
    return Chunk(JOURNALS, [spec], size(spec))


def _movable_branch(rng: random.Random, nodes: int) -> Chunk:
    per_folder = (nodes - 1 - MOVABLE_FOLDERS) // MOVABLE_FOLDERS
    parts = [
        folder(f"part-{p:02d}", f"Part {p}.", [note(rng, f"page-{i:03d}.md", f"part {p}") for i in range(per_folder)])
        for p in range(MOVABLE_FOLDERS)
    ]
    spec = folder("movable-branch", "A branch that the move benchmark moves back and forth.", parts)
    return Chunk(MOVES_A, [spec], size(spec))


def _discarded_branch(rng: random.Random, path: str) -> Chunk:
    name = path.rsplit("/", 1)[1]
    folders, notes = DISCARDED_SHAPE
    parts = [
        folder(f"part-{p:02d}", f"Part {p}.", [note(rng, f"page-{i:03d}.md", name) for i in range(notes)])
        for p in range(folders)
    ]
    spec = folder(name, "A branch the delete benchmark removes.", parts)
    return Chunk(TRASH, [spec], size(spec))


def _references(rng: random.Random, budget: Budget) -> Iterator[Chunk]:
    """Areas under /references, each filled one topic (about 7,000 nodes) per chunk."""
    area_index = 0
    while budget.take():
        word = rng.choice(WORDS)
        area = f"area-{area_index:02d}-{word}"
        yield Chunk("/references", [folder(area, f"Everything the swarm has collected about {word}.")], 1)
        for topic_index in range(rng.randint(*LEVELS[0][1])):
            topic = _branch(rng, budget, level=0, index=topic_index)
            if topic is None:
                return
            yield Chunk(f"/references/{area}", [topic], size(topic))
        area_index += 1


def _branch(rng: random.Random, budget: Budget, *, level: int, index: int) -> NodeSpec | None:
    """One node of level `level` with its whole branch below, or None when the budget is spent."""
    if not budget.take():
        return None
    kind = LEVELS[level][0]
    word = rng.choice(WORDS)
    if level == len(LEVELS) - 1:
        return note(rng, f"{kind}-{index:03d}-{word}.md", word)
    spec = folder(f"{kind}-{index:02d}-{word}", f"A {kind} about {word}, gathered by the swarm.")
    for child_index in range(rng.randint(*LEVELS[level + 1][1])):
        child = _branch(rng, budget, level=level + 1, index=child_index)
        if child is None:
            break
        spec.children.append(child)
    return spec


def build_chunks(chunks: Iterable[Chunk], *, space: Space) -> tuple[int, float]:
    """Build a tree chunk by chunk in the space; return the nodes built and the seconds spent inside
    node_bulk_create (generating the specs is not the service's cost, so it is not counted)."""
    parents: dict[str, Node] = {}
    built, seconds, next_report = 0, 0.0, 100_000
    for chunk in chunks:
        if chunk.parent_path not in parents:
            parents[chunk.parent_path] = selectors.node_resolve(space=space, path=chunk.parent_path)
        started = time.perf_counter()
        services.node_bulk_create(parent=parents[chunk.parent_path], specs=chunk.specs, by=system_principal(space))
        seconds += time.perf_counter() - started
        built += chunk.size
        if built >= next_report:
            print(f"built {built:,} nodes, {built / seconds:,.0f} nodes/s", file=sys.stderr)
            next_report += 100_000
    return built, seconds
