from django.urls import path

from agents.api import agents, brains
from agents.selectors import BRAIN_COLLECTIONS

app_name = "agents-api"

urlpatterns = [
    path("", agents.AgentCreateApi.as_view(), name="agent-create"),
    path("<int:agent_id>/", agents.AgentDetailApi.as_view(), name="agent-detail"),
    path("<int:agent_id>/messages/", agents.MessageAppendApi.as_view(), name="message-append"),
    path("<int:agent_id>/context/", agents.AgentContextApi.as_view(), name="agent-context"),
    path("<int:agent_id>/checkpoints/", agents.CheckpointCreateApi.as_view(), name="checkpoint-create"),
    path(
        "<int:agent_id>/checkpoints/<int:checkpoint_id>/restore/",
        agents.CheckpointRestoreApi.as_view(),
        name="checkpoint-restore",
    ),
    # brains
    path("<int:agent_id>/brain/", brains.BrainApi.as_view(), name="brain"),
    *(
        path(
            f"<int:agent_id>/brain/{name}/",
            brains.BrainCollectionApi.for_collection(collection),
            name=f"brain-{name}",
        )
        for name, collection in BRAIN_COLLECTIONS.items()
    ),
    path("<int:agent_id>/tick/", brains.TickApi.as_view(), name="tick"),
    path("<int:agent_id>/ticking/start/", brains.TickingStartApi.as_view(), name="ticking-start"),
    path("<int:agent_id>/ticking/pause/", brains.TickingPauseApi.as_view(), name="ticking-pause"),
    path("<int:agent_id>/chat/", brains.ChatApi.as_view(), name="chat"),
    path("<int:agent_id>/goals/", brains.GoalCreateApi.as_view(), name="goal-create"),
    path("<int:agent_id>/goals/<int:goal_id>/complete/", brains.GoalCompleteApi.as_view(), name="goal-complete"),
    path("<int:agent_id>/memory.json", brains.MemoryJsonApi.as_view(), name="memory-json"),
]
