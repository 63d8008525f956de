"""Every operation of the client as a flow (memsite_client.flows.base): built and parsed here
once, carried out by the sync and the async client alike."""

from memsite_client.flows.agents import AgentFlows
from memsite_client.flows.base import Policy
from memsite_client.flows.searches import SearchFlows


class Flows(SearchFlows, AgentFlows):
    def __init__(self, policy: Policy) -> None:
        self.policy = policy
