from django.urls import path

from memsite.spaces.api import views

app_name = "spaces-api"

urlpatterns = [
    path("", views.SpaceListApi.as_view(), name="space-list"),
    path("<slug:slug>/", views.SpaceDetailApi.as_view(), name="space"),
    path("<slug:slug>/members/", views.MemberListApi.as_view(), name="member-list"),
    path("<slug:slug>/members/<str:username>/", views.MemberApi.as_view(), name="member"),
    path("<slug:slug>/tokens/", views.TokenListApi.as_view(), name="token-list"),
    path("<slug:slug>/tokens/<int:token_id>/", views.TokenApi.as_view(), name="token"),
]
