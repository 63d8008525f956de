from django.urls import path

from agents.graphs.api import graphs

app_name = "graphs-api"

urlpatterns = [
    path("", graphs.GraphCreateApi.as_view(), name="graph-create"),
    path("<int:graph_id>/", graphs.GraphDetailApi.as_view(), name="graph-detail"),
    path("<int:graph_id>/memorize/", graphs.GraphMemorizeApi.as_view(), name="graph-memorize"),
    path("<int:graph_id>/recall/", graphs.GraphRecallApi.as_view(), name="graph-recall"),
    path("<int:graph_id>/context/", graphs.GraphContextApi.as_view(), name="graph-context"),
    path("<int:graph_id>/nodes/", graphs.GraphNodeListApi.as_view(), name="graph-nodes"),
    path(
        "<int:graph_id>/nodes/<int:node_id>/",
        graphs.GraphNodeDetailApi.as_view(),
        name="graph-node",
    ),
    path("<int:graph_id>/leaves/", graphs.GraphLeavesApi.as_view(), name="graph-leaves"),
    path("<int:graph_id>/ops/", graphs.GraphOpListApi.as_view(), name="graph-ops"),
    path("<int:graph_id>/snapshot/", graphs.GraphSnapshotApi.as_view(), name="graph-snapshot"),
]
