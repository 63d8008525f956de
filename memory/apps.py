from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory tree"

    def ready(self) -> None:
        from memory.selectors.searches import searches_in_flight
        from memsite.quotas.selectors import register_in_flight

        register_in_flight("searches", searches_in_flight)
