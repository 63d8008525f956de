from django.apps import AppConfig


class BrainsConfig(AppConfig):
    name = "agents.brains"
    verbose_name = "Brains"

    def ready(self) -> None:
        from agents.brains.selectors.quotas import ticking_agents_in_flight, ticks_in_flight
        from memsite.llm.selectors import ServedPage, register_served_page
        from memsite.quotas.selectors import register_in_flight

        register_in_flight("ticks", ticks_in_flight)
        register_in_flight("ticking_agents", ticking_agents_in_flight)
        # A brain's page is its agent's id, which is the brain's own.
        register_served_page("brains.tickrun", ServedPage("tick", "agents:brain_detail", via="brain_id"))
        # A chat's LLM call serves the user's message, which the brain page's chat shows.
        register_served_page("context.message", ServedPage("chat line", "agents:brain_detail", via="agent_id"))
