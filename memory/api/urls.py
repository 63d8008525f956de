from django.urls import path

from memory.api import history, nodes, retrieve, searches

app_name = "memory-api"

urlpatterns = [
    path("nodes/", nodes.NodeCreateApi.as_view(), name="node-create"),
    # Fixed words before <node_id>, which would otherwise swallow them.
    path("nodes/roots/", nodes.NodeRootsApi.as_view(), name="node-roots"),
    path("nodes/resolve/", nodes.NodeResolveApi.as_view(), name="node-resolve"),
    path("nodes/<str:node_id>/", nodes.NodeDetailApi.as_view(), name="node-detail"),
    path("nodes/<str:node_id>/children/", nodes.NodeChildrenApi.as_view(), name="node-children"),
    path("nodes/<str:node_id>/ancestors/", nodes.NodeAncestorsApi.as_view(), name="node-ancestors"),
    path("nodes/<str:node_id>/history/", history.NodeHistoryApi.as_view(), name="node-history"),
    path("nodes/<str:node_id>/history/<int:version>/", history.NodeVersionApi.as_view(), name="node-version"),
    path(
        "nodes/<str:node_id>/history/<int:version>/restore/",
        history.NodeRestoreApi.as_view(),
        name="node-restore",
    ),
    path("nodes/<str:node_id>/move/", nodes.NodeMoveApi.as_view(), name="node-move"),
    path("nodes/<str:node_id>/content/", nodes.NodeContentApi.as_view(), name="node-content"),
    path("nodes/<str:node_id>/export/", nodes.ProjectExportApi.as_view(), name="project-export"),
    path("nodes/<str:node_id>/import/", nodes.ProjectImportApi.as_view(), name="project-import"),
    path("retrieve/", retrieve.RetrieveApi.as_view(), name="retrieve"),
    path("searches/", searches.SearchStartApi.as_view(), name="search-start"),
    path("searches/<int:search_id>/", searches.SearchDetailApi.as_view(), name="search-detail"),
    path("searches/<int:search_id>/steps/", searches.SearchStepsApi.as_view(), name="search-steps"),
    path("searches/<int:search_id>/cancel/", searches.SearchCancelApi.as_view(), name="search-cancel"),
    path("questions/", searches.QuestionListApi.as_view(), name="question-list"),
    path("questions/<int:question_id>/answer/", searches.QuestionAnswerApi.as_view(), name="question-answer"),
]
