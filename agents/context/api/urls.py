from django.urls import path

from agents.context.api import agents

# Included with the brains' routes under /api/agents/ and the one "agents-api" namespace
# (memsite/urls.py).
urlpatterns = [
    path("", agents.AgentCreateApi.as_view(), name="agent-create"),
    path("<int:agent_id>/", agents.AgentDetailApi.as_view(), name="agent-detail"),
    path("<int:agent_id>/messages/", agents.MessagesApi.as_view(), name="messages"),
    path("<int:agent_id>/context/", agents.AgentContextApi.as_view(), name="agent-context"),
    path(
        "<int:agent_id>/checkpoints/",
        agents.CheckpointCreateApi.as_view(),
        name="checkpoint-create",
    ),
    path(
        "<int:agent_id>/checkpoints/<int:checkpoint_id>/restore/",
        agents.CheckpointRestoreApi.as_view(),
        name="checkpoint-restore",
    ),
]
