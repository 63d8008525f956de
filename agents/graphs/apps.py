from django.apps import AppConfig


class GraphsConfig(AppConfig):
    name = "agents.graphs"
    verbose_name = "Reasoning graphs"

    def ready(self) -> None:
        from memsite.llm.selectors import ServedPage, register_served_page

        register_served_page("graphs.graphop", ServedPage("graph operation", "agents:graph_detail", via="graph_id"))
