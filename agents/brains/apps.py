from django.apps import AppConfig


class BrainsConfig(AppConfig):
    name = "agents.brains"
    verbose_name = "Brains"
