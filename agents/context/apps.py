from django.apps import AppConfig


class ContextConfig(AppConfig):
    name = "agents.context"
    verbose_name = "Agents and their conversations"

    def ready(self) -> None:
        from memsite.llm.selectors import ServedPage, register_served_page

        register_served_page("context.summary", ServedPage("summary", "agents:agent_detail", via="agent_id"))
