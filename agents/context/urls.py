from django.urls import path

from agents.context import edit_views, views

# Included with the brains' and graphs' pages under the one "agents" namespace (memsite/urls.py).
urlpatterns = [
    path("agents/", views.agent_list, name="agent_list"),
    path("agents/create/", views.agent_create, name="agent_create"),
    path("agents/<int:agent_id>/", views.agent_detail, name="agent_detail"),
    path("agents/<int:agent_id>/edit/", edit_views.agent_edit, name="agent_edit"),
    path("agents/<int:agent_id>/delete/", edit_views.agent_delete, name="agent_delete"),
    path("agents/<int:agent_id>/checkpoints/", edit_views.checkpoint_create, name="checkpoint_create"),
    path(
        "agents/<int:agent_id>/checkpoints/<int:checkpoint_id>/restore/",
        edit_views.checkpoint_restore,
        name="checkpoint_restore",
    ),
    path("agents/<int:agent_id>/context/", views.agent_context, name="agent_context"),
    path("agents/<int:agent_id>/messages/", views.message_list, name="message_list"),
    path("agents/<int:agent_id>/messages/append/", views.message_append, name="message_append"),
]
