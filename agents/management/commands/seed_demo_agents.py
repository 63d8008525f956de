"""`manage.py seed_demo_agents`: the demo agent of `make run`, the demo user's, and how to start it."""

from django.core.management.base import BaseCommand
from django.urls import reverse

from agents.demo import DEMO_AGENT, demo_agent_seed
from memsite.demo import demo_principal, demo_require_debug
from memsite.errors import ServiceUnavailable
from memsite.spaces.selectors import space_default


class Command(BaseCommand):
    help = (
        "Add the demo agent with its brain, conversation and reasoning graph, the demo user's (idempotent); "
        "print where to start it ticking."
    )

    def add_arguments(self, parser):
        parser.add_argument("--url", default="http://127.0.0.1:8000/", help="Where memsite will be served.")

    def handle(self, *args, url: str, **options):
        demo_require_debug(command="seed_demo_agents")
        try:
            agent, made = demo_agent_seed(by=demo_principal(space=space_default()))
        except ServiceUnavailable as error:
            self.stdout.write(f"Demo agent not added: {error.message}")
            return
        self.stdout.write(f"Demo agent {DEMO_AGENT!r} {'added' if made else 'is already there'}.")
        page = url.rstrip("/") + reverse("agents:brain_detail", args=[agent.pk])
        self.stdout.write(f"Start the demo agent {DEMO_AGENT} on its page: {page}")
