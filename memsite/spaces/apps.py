from django.apps import AppConfig


class SpacesConfig(AppConfig):
    name = "memsite.spaces"
    label = "spaces"
    verbose_name = "Spaces, members and tokens"
