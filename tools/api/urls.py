from django.urls import path

from tools.api import views

app_name = "tools-api"

urlpatterns = [
    path("openai.json", views.ToolListApi.as_view(), name="tools-openai"),
    path("call/", views.ToolCallApi.as_view(), name="tool-call"),
]
