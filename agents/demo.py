"""The demo agent of `make run`, in the default space: a conversation, a brain that ticks on its
own, and a reasoning graph with a few memorized steps, so that every part of memsite has
something to show."""

from django.db import transaction

from agents.brains.services.brains import goal_create
from agents.brains.services.ticks import ticking_start
from agents.context.models import Agent
from agents.context.selectors.agents import agent_named
from agents.context.services.agents import agent_create
from agents.context.services.messages import message_append
from agents.graphs.services.graphs import graph_create, graph_memorize
from memsite.spaces.models import Space
from memsite.spaces.selectors import space_default

DEMO_AGENT = "scout"
TICK_INTERVAL_S = 30
STEPS = [
    {"role": "assistant", "content": "I list /references to see what the swarm keeps there."},
    {"role": "tool", "content": "/references holds notes on deployments and on the todo API."},
    {"role": "assistant", "content": "I read the deployment note."},
    {"role": "tool", "content": "Deployments run the migrations first, then restart the web and worker processes."},
]


def demo_agent_seed() -> Agent | None:
    """The demo agent, made once; None when it is there already. Its ticking and the graph's
    memorizing are queued for the worker; with the broker down, ServiceUnavailable and nothing
    made, so that the next run makes it whole."""
    space = space_default()
    if agent_named(space=space, name=DEMO_AGENT) is not None:
        return None
    with transaction.atomic():
        return _demo_agent_create(space)


def _demo_agent_create(space: Space) -> Agent:
    agent = agent_create(
        space=space,
        name=DEMO_AGENT,
        model="gpt-4o-mini",
        instructions="You are $name, a scout of the swarm. Learn what memory holds about $topic.",
        context_variables={"name": "Scout", "topic": "deployments"},
        strategy="importance",
    )
    message_append(agent=agent, role="user", content="What do we know about deployments?", pinned=True)
    message_append(agent=agent, role="assistant", content="I will look through /references and report back.")
    goal_create(agent=agent, text="Learn what /references holds about deployments")
    graph = graph_create(space=space, task="Find out how the swarm deploys", agent=agent)
    graph_memorize(graph=graph, messages=STEPS)
    ticking_start(agent=agent, interval_s=TICK_INTERVAL_S)
    return agent
