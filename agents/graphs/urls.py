from django.urls import path

from agents.graphs import views

# Included with the agents' and brains' pages under the one "agents" namespace (memsite/urls.py).
urlpatterns = [
    path("graphs/", views.graph_list, name="graph_list"),
    path("graphs/create/", views.graph_create, name="graph_create"),
    path("graphs/<int:graph_id>/", views.graph_detail, name="graph_detail"),
    path("graphs/<int:graph_id>/live/", views.graph_live, name="graph_live"),
    path("graphs/<int:graph_id>/nodes/<int:node_id>/", views.graph_node, name="graph_node"),
    path("graphs/<int:graph_id>/recall/", views.graph_recall, name="graph_recall"),
    path("graphs/<int:graph_id>/memorize/", views.graph_memorize, name="graph_memorize"),
]
