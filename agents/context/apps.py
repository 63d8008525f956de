from django.apps import AppConfig


class ContextConfig(AppConfig):
    name = "agents.context"
    verbose_name = "Agents and their conversations"
