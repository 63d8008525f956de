"""What the API answers, as pydantic models named after its serializers. Fields the server
adds later are kept (extra="allow"), so an older client reads a newer server."""

import datetime as dt
from datetime import datetime
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

T = TypeVar("T")


class Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Page(Model, Generic[T]):
    """One cursor page of a list: `next` is null on the last page."""

    next: str | None = None
    previous: str | None = None
    results: list[T]


# -- memory ------------------------------------------------------------------------------------


class Node(Model):
    """A node of the memory tree. `children_ids` is given when one node is read, not in lists."""

    id: str
    name: str
    type: str
    is_folder: bool
    description: str
    context: dict[str, Any] = Field(default_factory=dict)
    parent: str | None = None
    path: str
    child_count: int = 0
    content_size: int | None = None
    created_at: datetime
    updated_at: datetime
    version: int
    created_by: str | None = None
    mode: str | None = None
    date: dt.date | None = None  # the day its content speaks of, as its writer gave it
    children_ids: list[str] | None = None


class Scores(Model):
    fulltext: float | None = None
    vector: float | None = None


class Expansion(Model):
    """A passage with its neighbours in the node (`retrieve`'s `expand_tokens`): where the span
    lies in the node's text, its passages joined, and the tokens they hold."""

    start: int
    end: int
    text: str
    tokens: int


class Passage(Model):
    """A passage `retrieve` found: its node, where it lies in the node's text, and its scores;
    `expanded` when asked for with `expand_tokens` (a content passage only)."""

    node: str
    path: str
    type: str
    name: str
    kind: str
    start: int
    end: int
    snippet: str
    score: float
    scores: Scores
    expanded: Expansion | None = None
    date: dt.date | None = None  # the day it speaks of; None when nothing dates it


class Retrieval(Model):
    query: str
    results: list[Passage]


# -- searches ----------------------------------------------------------------------------------


class Citation(Model):
    """Where an answer came from: a character range of a node's text, and the day it speaks of."""

    node: str
    start: int
    end: int
    date: dt.date | None = None  # the day the cited passage speaks of


class Answer(Model):
    """The answer to one question; `text` is the API's `answer` field."""

    question: str
    text: str = Field(alias="answer")
    node_ids: list[str] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    complete: bool = False


class FoundPassage(Model):
    start: int
    end: int
    snippet: str


class FoundNode(Model):
    """A node that is itself an answer (output="node")."""

    id: str
    name: str
    path: str
    found_by: str = "reading"
    passages: list[FoundPassage] = Field(default_factory=list)


class SearchResult(Model):
    answers: list[Answer] = Field(default_factory=list)
    nodes: list[FoundNode] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)
    ended_because: str = ""


class Budgets(Model):
    max_llm_calls: int
    max_tokens: int
    timeout_s: int


class Spent(Model):
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float


class Search(Model):
    """A search (`ask`): its status and, once it has ended, its result."""

    id: int
    status: str
    url: str
    trace_url: str
    questions: list[str]
    context: str = ""
    start_node: str | None = None
    output: str
    fallback: str
    budgets: Budgets
    spent: Spent
    steps: int
    ended_because: str = ""
    result: SearchResult | None = None
    parent: int | None = None
    children: list[int] = Field(default_factory=list)
    user_question: int | None = None
    created_by: str | None = None
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    provider: str | None = None  # of the calls that produced it: "offline" when heuristics did

    @property
    def running(self) -> bool:
        """Queued or running: neither ended nor waiting for the user to answer a question."""
        return self.status in ("queued", "running")

    @property
    def answers(self) -> list[Answer]:
        return self.result.answers if self.result is not None else []

    @property
    def nodes(self) -> list[FoundNode]:
        """The nodes that answer (output="node"), once the search has ended."""
        return self.result.nodes if self.result is not None else []

    @property
    def answer(self) -> Answer | None:
        """The answer to the first question, if the search has ended."""
        return self.answers[0] if self.answers else None


class Question(Model):
    """Questions a search could not answer, put to the user (fallback="ask_user")."""

    id: int
    search: int
    questions: list[str]
    status: str
    answer: str = ""
    answered_by: str | None = None
    answered_at: datetime | None = None
    document: str | None = None
    created_at: datetime


# -- agents ------------------------------------------------------------------------------------


class Agent(Model):
    id: int
    name: str
    model: str
    instructions: str = ""
    context_variables: dict[str, Any] = Field(default_factory=dict)
    strategy: str
    window_turns: int
    reserved_output_tokens: int
    turn_input_limit: int | None = None
    conversation_token_budget: int | None = None
    message_count: int
    conversation_tokens: int
    created_at: datetime
    updated_at: datetime


class Message(Model):
    """A message of an agent's conversation, as stored."""

    position: int
    role: str
    content: str
    name: str = ""
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    tool_call_id: str = ""
    sender: str = ""
    pinned: bool = False
    importance: float
    data: dict[str, Any] = Field(default_factory=dict)  # a chat reply's citations and provider
    token_count: int
    created_at: datetime


class ContextReport(Model):
    """How the context was assembled; the API's report has more fields, kept as extras."""

    model: str
    strategy: str
    context_window: int
    window: int
    total: int
    free: int
    tiers: dict[str, int]
    compacted: bool
    warnings: list[str] = Field(default_factory=list)
    stored_messages: int
    included: list[dict[str, Any]] = Field(default_factory=list)
    dropped: list[dict[str, Any]] = Field(default_factory=list)


class AgentContext(Model):
    """The messages of the agent's next model call, as the chat API takes them, and the report."""

    messages: list[dict[str, Any]]
    report: ContextReport


class Goal(Model):
    id: int
    text: str
    status: str
    created_at: datetime
    done_at: datetime | None = None


class Plan(Model):
    steps: list[str] = Field(default_factory=list)
    current: int | None = None
    current_step: str | None = None


class Ticking(Model):
    ticking: bool
    interval_s: int
    next_tick_at: datetime | None = None
    tick_count: int
    idle: bool


class Brain(Model):
    """An agent's brain: its state, plan, goals, emotions, hormones, counts and ticking."""

    agent: int
    self_summary: str = ""
    plan: Plan
    goals: list[Goal] = Field(default_factory=list)
    emotions: dict[str, float] = Field(default_factory=dict)
    hormones: dict[str, float] = Field(default_factory=dict)
    last_user_message: str = ""
    last_error: str = ""
    state: dict[str, Any] = Field(default_factory=dict)
    counts: dict[str, int] = Field(default_factory=dict)
    ticking: Ticking
    created_at: datetime | None = None
    updated_at: datetime | None = None


class ChatCitation(Model):
    """What a chat reply draws on: `fact:<seq>`, `episode:<seq>` or `node:<node id>`."""

    id: str
    kind: str
    ref: str
    label: str


class ChatExchange(Model):
    """The user's line and the agent's reply, two messages of its conversation; what the reply
    cites, and the provider that wrote it (`offline`: heuristics, no model); `goal` when the
    line was `goal: ...`."""

    user: Message
    reply: Message
    goal: Goal | None = None
    citations: list[ChatCitation] = Field(default_factory=list)
    provider: str | None = None


# -- reasoning graphs --------------------------------------------------------------------------


class Graph(Model):
    id: int
    task: str
    agent: int | None = None
    model: str
    trigger_tokens: int
    target_tokens: int
    nodes: dict[str, int] = Field(default_factory=dict)
    turns: int = 0
    next_node_id: int
    next_turn_id: int
    created_at: datetime
    updated_at: datetime


class GraphOp(Model):
    """A memorize, recall or import of a graph: queued, then applied, rejected or failed."""

    id: int
    graph: int
    kind: str
    status: str
    rationale: str = ""
    error: str = ""
    data: dict[str, Any] = Field(default_factory=dict)
    tokens_before: int | None = None
    tokens_after: int | None = None
    created_at: datetime
    ended_at: datetime | None = None

    @property
    def queued(self) -> bool:
        return self.status == "queued"


class GraphContext(Model):
    """The agent's messages rebuilt from the graph, and their tokens."""

    messages: list[dict[str, str]]
    tokens: int
    raw_turns: list[int] = Field(default_factory=list)
    stand_ins: list[dict[str, Any]] = Field(default_factory=list)
    model: str
    trigger_tokens: int
    target_tokens: int
