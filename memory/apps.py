from django.apps import AppConfig
from django.db.models.signals import post_save


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory tree"

    def ready(self) -> None:
        from memory.selectors.searches import searches_in_flight
        from memory.services.spaces import space_memory_delete, space_saved
        from memsite.llm.selectors import ServedPage, register_served_page
        from memsite.quotas.selectors import register_in_flight
        from memsite.spaces.signals import space_deleting

        register_in_flight("searches", searches_in_flight)
        register_served_page("memory.search", ServedPage("search", "memory:search_detail", via="pk"))
        # The spaces app knows nothing of memory: memory listens for the spaces it makes.
        post_save.connect(space_saved, sender="spaces.Space", dispatch_uid="memory.space_saved")
        space_deleting.connect(space_memory_delete, dispatch_uid="memory.space_memory_delete")
