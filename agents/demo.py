"""The demo agent of `make run`, in the default space, the demo user's: a conversation, a brain
with goals (set ticking by whoever presses Start on its page: its ticks are then theirs,
within their budget), and a reasoning graph with a few memorized steps, so that every part of
memsite has something to show."""

from django.db import transaction

from agents.brains.services.brains import goal_create
from agents.context.models import Agent
from agents.context.selectors.agents import agent_named
from agents.context.services.agents import agent_create
from agents.context.services.messages import message_append
from agents.graphs.services.graphs import graph_create, graph_memorize
from memsite.spaces.principals import Principal

DEMO_AGENT = "scout"
# Its goals, the first its primary one: one the demo memory answers (its todo API and HTTP
# status codes), so that even offline its ticks have something to recall for it.
GOALS = [
    "Find which HTTP status code the todo API answers when it creates a todo",
    "Learn what /references holds about deployments",
]
STEPS = [
    {"role": "assistant", "content": "I list /references to see what the swarm keeps there."},
    {"role": "tool", "content": "/references holds notes on deployments and on the todo API."},
    {"role": "assistant", "content": "I read the deployment note."},
    {"role": "tool", "content": "Deployments run the migrations first, then restart the web and worker processes."},
]


def demo_agent_seed(*, by: Principal) -> tuple[Agent, bool]:
    """The demo agent in `by`'s space, made once for `by` (the demo user), and whether it was
    made now. The graph's memorizing is queued for the worker, as `by`'s work; with the broker
    down, ServiceUnavailable and nothing made, so that the next run makes it whole."""
    agent = agent_named(space=by.space, name=DEMO_AGENT)
    if agent is not None:
        return agent, False
    with transaction.atomic():
        return _demo_agent_create(by), True


def _demo_agent_create(by: Principal) -> Agent:
    agent = agent_create(
        space=by.space,
        name=DEMO_AGENT,
        model="gpt-4o-mini",
        instructions="You are $name, a scout of the swarm. Learn what memory holds about $topic.",
        context_variables={"name": "Scout", "topic": "deployments"},
        strategy="importance",
    )
    message_append(agent=agent, role="user", content="What do we know about deployments?", pinned=True)
    message_append(agent=agent, role="assistant", content="I will look through /references and report back.")
    for goal in GOALS:
        goal_create(agent=agent, text=goal)
    graph = graph_create(space=by.space, task="Find out how the swarm deploys", agent=agent)
    graph_memorize(graph=graph, messages=STEPS, by=by)
    return agent
