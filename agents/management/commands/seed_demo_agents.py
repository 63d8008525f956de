from django.core.management.base import BaseCommand

from agents.demo import DEMO_AGENT, demo_agent_seed
from memsite.demo import demo_require_debug
from memsite.errors import ServiceUnavailable


class Command(BaseCommand):
    help = "Add the demo agent with its brain, conversation and reasoning graph (idempotent)."

    def handle(self, *args, **options):
        demo_require_debug(command="seed_demo_agents")
        try:
            agent = demo_agent_seed()
        except ServiceUnavailable as error:
            self.stdout.write(f"Demo agent not added: {error.message}")
            return
        if agent is None:
            self.stdout.write(f"Demo agent {DEMO_AGENT!r} is already there.")
        else:
            self.stdout.write(f"Demo agent {DEMO_AGENT!r} added: it ticks every 30 s; see /agents/{agent.pk}/brain/")
