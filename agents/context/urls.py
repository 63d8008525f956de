from django.urls import path

from agents.context import views

# Included with the brains' and graphs' pages under the one "agents" namespace (memsite/urls.py).
urlpatterns = [
    path("agents/", views.agent_list, name="agent_list"),
    path("agents/create/", views.agent_create, name="agent_create"),
    path("agents/<int:agent_id>/", views.agent_detail, name="agent_detail"),
    path("agents/<int:agent_id>/context/", views.agent_context, name="agent_context"),
    path("agents/<int:agent_id>/messages/", views.message_list, name="message_list"),
    path("agents/<int:agent_id>/messages/append/", views.message_append, name="message_append"),
]
