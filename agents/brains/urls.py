from django.urls import path

from agents.brains import views

# Included with the agents' and graphs' pages under the one "agents" namespace (memsite/urls.py).
urlpatterns = [
    path("agents/<int:agent_id>/brain/", views.brain_detail, name="brain_detail"),
    path("agents/<int:agent_id>/brain/stream/", views.brain_stream, name="brain_stream"),
    path("agents/<int:agent_id>/brain/tick/", views.brain_tick, name="brain_tick"),
    path(
        "agents/<int:agent_id>/brain/ticking/start/",
        views.brain_ticking_start,
        name="brain_ticking_start",
    ),
    path(
        "agents/<int:agent_id>/brain/ticking/pause/",
        views.brain_ticking_pause,
        name="brain_ticking_pause",
    ),
    path("agents/<int:agent_id>/brain/goals/", views.brain_goal_create, name="brain_goal_create"),
    path(
        "agents/<int:agent_id>/brain/goals/<int:goal_id>/complete/",
        views.brain_goal_complete,
        name="brain_goal_complete",
    ),
    path("agents/<int:agent_id>/brain/chat/", views.brain_chat, name="brain_chat"),
]
