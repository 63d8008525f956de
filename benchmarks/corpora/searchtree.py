"""The search benchmark's tree and questions, produced as chunks of `NodeSpec`s for
`node_bulk_create` (one chunk per child of the benchmark's root, about a 25th of the tree).

    /references/search-bench-<size>/<area>/<topic>/.../<codename>-<aspect>.md

Every folder has 20–30 children. The number of folders is set so that the tree holds the
size asked for; the deepest folder level is only partly folders, so the documents sit at two
depths (as in any real tree, some folders hold documents beside subfolders). Names and
descriptions are readable: areas and topics are words from the lists below, a document is a
codename and an aspect (`falcon-latency.md`), and its content says the aspect's value. A
folder's description names a few of its children, as a summary of its contents would
(`Notes on replication within databases, such as failover, falcon latency and quotas.`),
unless asked for plain ones.

A question names the document's aspect and codename and the topic words of its path
(`What was the latency of falcon under databases / replication / failover?`): the words an
asker who knows the context would use, and the words that the names and descriptions on the
way down share with it. The answer is the value in the document's content.

The random generator is seeded: the same arguments build the same tree and questions."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field

from benchmarks.corpora.treeshape import Chunk, size
from memory.services import NodeSpec

FANOUT = (20, 30)
PARENT = "/references"

AREAS = (
    "databases",
    "networking",
    "compilers",
    "security",
    "storage",
    "scheduling",
    "observability",
    "deployment",
    "caching",
    "messaging",
    "retrieval",
    "analytics",
    "authentication",
    "billing",
    "frontend",
    "mobile",
    "robotics",
    "genomics",
    "finance",
    "logistics",
    "energy",
    "climate",
    "healthcare",
    "education",
    "legal",
    "marketing",
    "hiring",
    "manufacturing",
    "agriculture",
    "aviation",
)
TOPICS = (
    "replication",
    "sharding",
    "indexing",
    "failover",
    "backups",
    "migrations",
    "partitioning",
    "compaction",
    "throttling",
    "batching",
    "retries",
    "timeouts",
    "quotas",
    "encryption",
    "sessions",
    "schemas",
    "pipelines",
    "dashboards",
    "alerts",
    "incidents",
    "audits",
    "forecasts",
    "budgets",
    "contracts",
    "vendors",
    "suppliers",
    "warehouses",
    "routes",
    "fleets",
    "sensors",
    "turbines",
    "batteries",
    "satellites",
    "drones",
    "cameras",
    "firmware",
    "kernels",
    "drivers",
    "parsers",
    "linkers",
    "allocators",
    "schedulers",
    "queues",
    "brokers",
    "gateways",
    "proxies",
    "firewalls",
    "certificates",
    "passwords",
    "permissions",
    "invoices",
    "refunds",
    "payroll",
    "pricing",
    "discounts",
    "campaigns",
    "surveys",
    "interviews",
    "onboarding",
    "training",
    "curricula",
    "exams",
    "lawsuits",
    "patents",
    "licenses",
    "trademarks",
    "clinics",
    "vaccines",
    "trials",
    "genomes",
    "proteins",
    "enzymes",
    "harvests",
    "irrigation",
    "fertilizers",
    "greenhouses",
    "runways",
    "engines",
    "cockpits",
    "hangars",
    "factories",
    "assembly",
    "welding",
    "robots",
    "grippers",
    "lidar",
    "maps",
    "navigation",
    "telemetry",
    "tracing",
    "logging",
    "metrics",
    "profiling",
    "benchmarks",
    "caches",
    "embeddings",
    "tokenizers",
    "prompts",
    "agents",
    "evaluations",
    "rollouts",
    "canaries",
    "feature-flags",
    "containers",
    "clusters",
    "volumes",
    "snapshots",
    "tenants",
    "accounts",
    "subscriptions",
)
CODENAMES = (
    "atlas",
    "beacon",
    "cobalt",
    "delta",
    "ember",
    "falcon",
    "granite",
    "harbor",
    "iris",
    "jasper",
    "kestrel",
    "lumen",
    "meridian",
    "nimbus",
    "onyx",
    "pioneer",
    "quartz",
    "raven",
    "sierra",
    "tundra",
    "umbra",
    "vertex",
    "willow",
    "xenon",
    "yarrow",
    "zephyr",
    "amber",
    "basalt",
    "cedar",
    "dune",
    "echo",
    "fjord",
    "glacier",
    "heron",
    "indigo",
    "juniper",
    "lotus",
    "maple",
    "nova",
    "orchid",
    "pebble",
    "quill",
    "ridge",
    "saffron",
    "tidal",
    "violet",
    "walnut",
    "aurora",
    "comet",
    "orbit",
)
# aspect: (unit, low, high)
ASPECTS = {
    "latency": ("ms", 2, 900),
    "throughput": ("requests per second", 50, 90_000),
    "monthly cost": ("dollars", 40, 60_000),
    "error rate": ("percent", 1, 40),
    "uptime": ("hours", 10, 9_000),
    "capacity": ("gigabytes", 1, 8_000),
    "headcount": ("people", 1, 300),
    "budget": ("thousand dollars", 5, 5_000),
    "accuracy": ("percent", 50, 99),
    "peak load": ("users", 100, 500_000),
    "disk usage": ("gigabytes", 1, 4_000),
    "queue depth": ("messages", 1, 100_000),
    "battery life": ("hours", 1, 400),
    "weight": ("kilograms", 1, 20_000),
    "lead time": ("days", 1, 365),
    "temperature": ("degrees", -40, 120),
}

PAIRS = [(codename, aspect) for codename in CODENAMES for aspect in ASPECTS]


@dataclass(frozen=True)
class Question:
    text: str
    answer: str  # the sentence of the document's content that answers it
    path: str  # the readable path of the document that answers it
    depth: int  # of the document, below the benchmark's root


@dataclass
class Plan:
    """The shape: `children[i]` lists folder i's children in order, each a folder index or
    DOCUMENT; folder 0 is the root."""

    children: list[list[int]] = field(default_factory=lambda: [[]])

    @property
    def nodes(self) -> int:
        return 1 + sum(len(kids) for kids in self.children)


DOCUMENT = -1


def root_name(total: int) -> str:
    return f"search-bench-{total}"


def shape(total: int, rng: random.Random) -> Plan:
    """Level by level from the root: every folder gets 20–30 children, of which folders (spread
    evenly across the level) until the number of folders that the size needs is reached."""
    mean = sum(FANOUT) / 2
    wanted = max(1, round((total - 1) / mean))
    plan = Plan()
    level, made = [0], 1
    while level:
        fanouts = [rng.randint(*FANOUT) for _ in level]
        count = sum(fanouts)
        folders = min(wanted - made, count)
        next_level: list[int] = []
        position = 0
        for parent, fanout in zip(level, fanouts, strict=True):
            for _ in range(fanout):
                if position * folders // count != (position + 1) * folders // count:
                    plan.children.append([])
                    plan.children[parent].append(len(plan.children) - 1)
                    next_level.append(len(plan.children) - 1)
                else:
                    plan.children[parent].append(DOCUMENT)
                position += 1
        made += folders
        level = next_level
    _fit(plan, total)
    return plan


def _fit(plan: Plan, total: int) -> None:
    """Add or remove documents in the folders that hold only documents, one at a time and
    within the fan-out range, until the tree has `total` nodes (or no folder can change)."""
    low, high = FANOUT
    leafy = [kids for kids in plan.children if kids and all(kid == DOCUMENT for kid in kids)]
    if not leafy:
        return
    diff = total - plan.nodes
    step = 1 if diff > 0 else -1
    while diff:
        changed = False
        for kids in leafy:
            if diff == 0:
                break
            if (step > 0 and len(kids) < high) or (step < 0 and len(kids) > low):
                kids.append(DOCUMENT) if step > 0 else kids.pop()
                diff -= step
                changed = True
        if not changed:
            break


class _Namer:
    """Walks the plan depth first, turning it into NodeSpecs; picks the questions' documents by
    reservoir sampling (with a generator of its own, so the tree does not depend on how many
    questions are asked)."""

    def __init__(self, plan: Plan, *, root: str, seed: int, questions: int, examples: bool):
        self.plan = plan
        self.examples = examples
        self.root = root
        self.rng = random.Random(seed)
        self.pick = random.Random(seed + 1)
        self.wanted = questions
        self.seen = 0
        self.questions: list[Question] = []

    def folder(self, index: int, word: str, trail: list[str]) -> NodeSpec:
        """Folder `index` named `word`, below the topic words `trail` (its ancestors')."""
        kids = self.plan.children[index]
        folder_kids = sum(kid != DOCUMENT for kid in kids)
        here = [*trail, word]
        words = iter(self.rng.sample([topic for topic in TOPICS if topic not in here], folder_kids))
        pairs = iter(self.rng.sample(PAIRS, len(kids) - folder_kids))
        children = [
            self.folder(kid, next(words), here) if kid != DOCUMENT else self.document(*next(pairs), here)
            for kid in kids
        ]
        return NodeSpec(name=word, type="folder", description=self.describe(word, trail, children), children=children)

    def describe(self, word: str, trail: list[str], children: list[NodeSpec]) -> str:
        where = f"within {trail[-1]}" if trail else "across the swarm"
        if not self.examples:
            return f"Notes on {word} {where}."
        examples = [child.name.removesuffix(".md").replace("-", " ") for child in children[:3]]
        return f"Notes on {word} {where}, such as {', '.join(examples[:-1])} and {examples[-1]}."

    def document(self, codename: str, aspect: str, trail: list[str]) -> NodeSpec:
        unit, low, high = ASPECTS[aspect]
        value = f"{self.rng.randint(low, high):,} {unit}"
        answer = f"The {aspect} of {codename} was {value}."
        name = f"{codename}-{aspect.replace(' ', '-')}.md"
        context = f"{trail[-1]} ({trail[-2]})" if len(trail) > 1 else (trail[-1] if trail else "the benchmark")
        under = f" under {' / '.join(trail)}" if trail else ""
        other = self.rng.choice(CODENAMES)
        content = (
            f"# {codename} {aspect}\n\n"
            f"This note is about {codename}{under}. {answer} "
            f"It was measured by agent-{self.rng.randint(1, 64)} in week {self.rng.randint(1, 52)}. "
            f"Next: compare {codename} with {other}.\n"
        )
        self.consider(
            Question(
                text=f"What was the {aspect} of {codename}{under}?",
                answer=answer,
                path="/".join([PARENT, self.root, *trail, name]),
                depth=len(trail) + 1,
            )
        )
        return NodeSpec(
            name=name,
            type="document",
            description=f"The {aspect} of {codename} in {context}.",
            content=content.encode(),
        )

    def consider(self, question: Question) -> None:
        self.seen += 1
        if len(self.questions) < self.wanted:
            self.questions.append(question)
        else:
            slot = self.pick.randrange(self.seen)
            if slot < self.wanted:
                self.questions[slot] = question


@dataclass
class Build:
    """What `plan_chunks` produced, filled in as its chunks are consumed."""

    nodes: int
    questions: list[Question] = field(default_factory=list)


def plan_chunks(total: int, *, questions: int, seed: int = 7, examples: bool = True) -> tuple[Build, Iterator[Chunk]]:
    """The chunks that build a tree of `total` nodes under PARENT, and the `questions`
    questions, known once every chunk has been taken (the documents are sampled as they are
    made). With `examples`, a folder's description names its first three children, as a
    summary of its contents would; without, it says only the folder's topic and parent's."""
    rng = random.Random(seed)
    plan = shape(total, rng)
    build = Build(nodes=plan.nodes)
    root = root_name(total)
    namer = _Namer(plan, root=root, seed=seed, questions=questions, examples=examples)

    def chunks() -> Iterator[Chunk]:
        top = NodeSpec(name=root, type="folder", description=f"The search benchmark's tree of {plan.nodes:,} nodes.")
        yield Chunk(PARENT, [top], 1)
        kids = plan.children[0]
        words = iter(namer.rng.sample(AREAS, sum(kid != DOCUMENT for kid in kids)))
        pairs = iter(namer.rng.sample(PAIRS, sum(kid == DOCUMENT for kid in kids)))
        for kid in kids:
            spec = namer.folder(kid, next(words), []) if kid != DOCUMENT else namer.document(*next(pairs), [])
            yield Chunk(f"{PARENT}/{root}", [spec], size(spec))
        build.questions = sorted(namer.questions, key=lambda question: question.path)

    return build, chunks()
