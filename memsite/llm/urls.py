from django.urls import path

from memsite.llm import views

app_name = "llm"
urlpatterns = [
    path("", views.ledger, name="ledger"),
    path("calls/<int:call_id>/", views.call_detail, name="call"),
]
