from django.urls import path

from agents.brains.api import brains
from agents.brains.selectors import BRAIN_COLLECTIONS

# Included with the agents' routes under /api/agents/ and the one "agents-api" namespace
# (memsite/urls.py).
urlpatterns = [
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
    path(
        "<int:agent_id>/goals/<int:goal_id>/complete/",
        brains.GoalCompleteApi.as_view(),
        name="goal-complete",
    ),
    path("<int:agent_id>/memory.json", brains.MemoryJsonApi.as_view(), name="memory-json"),
]
