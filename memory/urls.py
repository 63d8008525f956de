from django.urls import path

from memory import views, views_curation, views_searches

app_name = "memory"

urlpatterns = [
    path("memory/", views.browser, name="browser"),
    # Before the node's page, whose <node_id> would take "find".
    path("memory/find/", views.find, name="find"),
    path("memory/<str:node_id>/", views.node_detail, name="node_detail"),
    path("memory/<str:node_id>/children/", views.node_children, name="node_children"),
    path("memory/<str:node_id>/create/", views.node_create, name="node_create"),
    path("memory/<str:node_id>/update/", views.node_update, name="node_update"),
    path("memory/<str:node_id>/delete/", views.node_delete, name="node_delete"),
    path("memory/<str:node_id>/content/", views.document_save, name="document_save"),
    path("memory/<str:node_id>/edit/", views_curation.document_edit, name="document_edit"),
    path("memory/<str:node_id>/move/", views_curation.node_move, name="node_move"),
    path("memory/<str:node_id>/move/folders/", views_curation.node_move_folders, name="node_move_folders"),
    path("memory/<str:node_id>/history/", views_curation.node_history, name="node_history"),
    path("memory/<str:node_id>/history/<int:version>/", views_curation.node_version, name="node_version"),
    path("memory/<str:node_id>/history/<int:version>/restore/", views_curation.node_restore, name="node_restore"),
    path("memory/<str:node_id>/archive/upload/", views.project_upload, name="project_upload"),
    path("memory/<str:node_id>/archive.tar.gz", views.project_download, name="project_download"),
    path("user/preferences/", views.user_preferences, name="user_preferences"),
    path("user/preferences/preview/", views.markdown_preview, name="markdown_preview"),
    path("searches/", views_searches.search_list, name="search_list"),
    path("searches/start/", views_searches.search_start, name="search_start"),
    path("searches/start/folders/", views_searches.search_start_folders, name="search_start_folders"),
    path("searches/<int:search_id>/", views_searches.search_detail, name="search_detail"),
    path(
        "searches/<int:search_id>/steps/<int:number>/call/",
        views_searches.search_step_call,
        name="search_step_call",
    ),
    path("searches/<int:search_id>/cancel/", views_searches.search_cancel, name="search_cancel"),
    path("questions/", views_searches.question_list, name="question_list"),
    path("questions/<int:question_id>/answer/", views_searches.question_answer, name="question_answer"),
]
