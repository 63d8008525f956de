from django.urls import path

from agents import views, views_brains, views_graphs

app_name = "agents"

urlpatterns = [
    path("agents/", views.agent_list, name="agent_list"),
    path("agents/create/", views.agent_create, name="agent_create"),
    path("agents/<int:agent_id>/", views.agent_detail, name="agent_detail"),
    path("agents/<int:agent_id>/context/", views.agent_context, name="agent_context"),
    path("agents/<int:agent_id>/messages/", views.message_list, name="message_list"),
    path("agents/<int:agent_id>/messages/append/", views.message_append, name="message_append"),
    path("agents/<int:agent_id>/brain/", views_brains.brain_detail, name="brain_detail"),
    path("agents/<int:agent_id>/brain/stream/", views_brains.brain_stream, name="brain_stream"),
    path("agents/<int:agent_id>/brain/tick/", views_brains.brain_tick, name="brain_tick"),
    path("agents/<int:agent_id>/brain/ticking/start/", views_brains.brain_ticking_start, name="brain_ticking_start"),
    path("agents/<int:agent_id>/brain/ticking/pause/", views_brains.brain_ticking_pause, name="brain_ticking_pause"),
    path("agents/<int:agent_id>/brain/goals/", views_brains.brain_goal_create, name="brain_goal_create"),
    path(
        "agents/<int:agent_id>/brain/goals/<int:goal_id>/complete/",
        views_brains.brain_goal_complete,
        name="brain_goal_complete",
    ),
    path("agents/<int:agent_id>/brain/chat/", views_brains.brain_chat, name="brain_chat"),
    path("graphs/", views_graphs.graph_list, name="graph_list"),
    path("graphs/create/", views_graphs.graph_create, name="graph_create"),
    path("graphs/<int:graph_id>/", views_graphs.graph_detail, name="graph_detail"),
    path("graphs/<int:graph_id>/live/", views_graphs.graph_live, name="graph_live"),
    path("graphs/<int:graph_id>/nodes/<int:node_id>/", views_graphs.graph_node, name="graph_node"),
    path("graphs/<int:graph_id>/recall/", views_graphs.graph_recall, name="graph_recall"),
    path("graphs/<int:graph_id>/memorize/", views_graphs.graph_memorize, name="graph_memorize"),
]
