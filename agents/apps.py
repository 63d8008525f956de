from django.apps import AppConfig


class AgentsConfig(AppConfig):
    """The parent of the context, brains and graphs apps: it keeps the migrations that made their
    tables, before they were split, and the demo agent's command."""

    name = "agents"
