"""Agents (their conversation, context, brain and chat) and reasoning graphs (memorize and
recall, waited for if asked)."""

from collections.abc import Iterable, Mapping
from typing import Any

from memsite_client.errors import NotFound
from memsite_client.flows.base import Call, Flow, Listing, Policy, done, fetch, fields, params, poll
from memsite_client.models import Agent, AgentContext, Brain, ChatExchange, Graph, GraphContext, GraphOp, Message, Page

AgentRef = int | Agent
GraphRef = int | Graph


def agent_url(agent: AgentRef, tail: str = "") -> str:
    return f"agents/{agent.id if isinstance(agent, Agent) else agent}/{tail}"


def graph_url(graph: GraphRef, tail: str = "") -> str:
    return f"graphs/{graph.id if isinstance(graph, Graph) else graph}/{tail}"


class AgentFlows:
    policy: Policy

    def create_agent(self, name: str, model: str, **settings: Any) -> Flow[Agent]:
        """A new agent; `settings` as the API takes them (instructions, strategy, budgets, ...)."""
        return (
            yield from fetch(
                Call("POST", "agents/", json={"name": name, "model": model, **settings}), Agent, self.policy
            )
        )

    def get_agent(self, agent: AgentRef) -> Flow[Agent]:
        return (yield from fetch(Call("GET", agent_url(agent)), Agent, self.policy))

    def add_message(self, agent: AgentRef, role: str, content: Any, **message: Any) -> Flow[Message]:
        """A message appended to the agent's conversation, as the chat API takes it."""
        call = Call("POST", agent_url(agent, "messages/"), json={"role": role, "content": content, **message})
        return (yield from fetch(call, Message, self.policy))

    def messages(self, agent: AgentRef, *, page_size: int | None = None) -> Listing[Message]:
        """The agent's conversation, newest first: the messages added and the chat's lines."""
        call = Call("GET", agent_url(agent, "messages/"), params=params(page_size=page_size))
        return Listing(done(call), Page[Message], self.policy)

    def context(
        self, agent: AgentRef, *, model: str | None = None, strategy: str | None = None, turns: int | None = None
    ) -> Flow[AgentContext]:
        """The messages for the agent's next model call, and how they were chosen."""
        call = Call("GET", agent_url(agent, "context/"), params=params(model=model, strategy=strategy, turns=turns))
        return (yield from fetch(call, AgentContext, self.policy))

    def brain(self, agent: AgentRef) -> Flow[Brain]:
        return (yield from fetch(Call("GET", agent_url(agent, "brain/")), Brain, self.policy))

    def chat(self, agent: AgentRef, text: str) -> Flow[ChatExchange]:
        """Says `text` to the agent; its reply is an LLM call made while the request waits. Both
        are appended to the agent's conversation."""
        return (
            yield from fetch(Call("POST", agent_url(agent, "chat/"), json={"text": text}), ChatExchange, self.policy)
        )

    def create_graph(
        self,
        task: str,
        *,
        agent: AgentRef | None = None,
        model: str | None = None,
        trigger_tokens: int | None = None,
        target_tokens: int | None = None,
    ) -> Flow[Graph]:
        """A reasoning graph for `task`, keeping `agent`'s steps if given."""
        agent_id = agent.id if isinstance(agent, Agent) else agent
        body = fields(
            task=task, agent=agent_id, model=model, trigger_tokens=trigger_tokens, target_tokens=target_tokens
        )
        return (yield from fetch(Call("POST", "graphs/", json=body), Graph, self.policy))

    def memorize(
        self,
        graph: GraphRef,
        messages: Iterable[Mapping[str, str]],
        *,
        wait: float | None = None,
        poll_interval: float = 1.0,
    ) -> Flow[GraphOp]:
        """The agent's newest turns (`{"role", "content"}`, each action then its result) stored
        and memorized by a worker: the operation as queued, or with `wait` seconds, as it ended."""
        call = Call("POST", graph_url(graph, "memorize/"), json={"messages": [dict(turn) for turn in messages]})
        op = yield from fetch(call, GraphOp, self.policy)
        return (yield from self._ended(op, wait, poll_interval))

    def recall(self, graph: GraphRef, *, wait: float | None = None, poll_interval: float = 1.0) -> Flow[GraphOp]:
        """A flush and fold of the graph: the operation as queued, or with `wait`, as it ended."""
        op = yield from fetch(Call("POST", graph_url(graph, "recall/")), GraphOp, self.policy)
        return (yield from self._ended(op, wait, poll_interval))

    def graph_context(self, graph: GraphRef) -> Flow[GraphContext]:
        """The agent's messages rebuilt from the graph, and their tokens."""
        return (yield from fetch(Call("GET", graph_url(graph, "context/")), GraphContext, self.policy))

    def graph_ops(self, graph: GraphRef, *, page_size: int | None = None) -> Listing[GraphOp]:
        """The graph's operations, newest first."""
        call = Call("GET", graph_url(graph, "ops/"), params=params(page_size=page_size))
        return Listing(done(call), Page[GraphOp], self.policy)

    def _ended(self, op: GraphOp, wait: float | None, every: float) -> Flow[GraphOp]:
        if wait is None:
            return op
        return (
            yield from poll(
                lambda: self._op(op.graph, op.id),
                op,
                running=lambda op: op.queued,
                wait=wait,
                every=every,
                policy=self.policy,
            )
        )

    def _op(self, graph_id: int, op_id: int) -> Flow[GraphOp]:
        """One operation of the graph, found in its list, newest first, as far as its id."""
        call: Call | None = Call("GET", graph_url(graph_id, "ops/"))
        while call is not None:
            page = yield from fetch(call, Page[GraphOp], self.policy)
            for op in page.results:
                if op.id == op_id:
                    return op
            older = page.results and page.results[-1].id > op_id  # the rest are older still
            call = Listing.after(page, call) if older else None
        raise NotFound(f"No operation {op_id} of graph {graph_id}.", status=404)
