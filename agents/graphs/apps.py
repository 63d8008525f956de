from django.apps import AppConfig


class GraphsConfig(AppConfig):
    name = "agents.graphs"
    verbose_name = "Reasoning graphs"

    def ready(self) -> None:
        from agents.graphs.selectors.graphs import graph_ops_in_flight
        from memsite.llm.selectors import ServedPage, register_served_page
        from memsite.quotas.selectors import register_in_flight

        register_in_flight("graph_ops", graph_ops_in_flight)
        register_served_page("graphs.graphop", ServedPage("graph operation", "agents:graph_detail", via="graph_id"))
