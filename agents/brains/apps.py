from django.apps import AppConfig


class BrainsConfig(AppConfig):
    name = "agents.brains"
    verbose_name = "Brains"

    def ready(self) -> None:
        from memsite.llm.selectors import ServedPage, register_served_page

        # A brain's page is its agent's id, which is the brain's own.
        register_served_page("brains.tickrun", ServedPage("tick", "agents:brain_detail", via="brain_id"))
        register_served_page("brains.record", ServedPage("chat line", "agents:brain_detail", via="brain_id"))
