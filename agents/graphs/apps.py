from django.apps import AppConfig


class GraphsConfig(AppConfig):
    name = "agents.graphs"
    verbose_name = "Reasoning graphs"
