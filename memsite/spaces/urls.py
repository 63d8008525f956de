from django.urls import path

from memsite.spaces import views

app_name = "spaces"

urlpatterns = [
    path("", views.space_list, name="space_list"),
    path("create/", views.space_create, name="space_create"),
    path("switch/", views.space_switch, name="space_switch"),
    path("<slug:slug>/members/", views.member_list, name="member_list"),
    path("<slug:slug>/members/set/", views.member_set, name="member_set"),
    path("<slug:slug>/members/<str:username>/remove/", views.member_remove, name="member_remove"),
    path("<slug:slug>/tokens/", views.token_list, name="token_list"),
    path("<slug:slug>/tokens/create/", views.token_create, name="token_create"),
    path("<slug:slug>/tokens/<int:token_id>/revoke/", views.token_revoke, name="token_revoke"),
    path("<slug:slug>/settings/", views.space_settings, name="space_settings"),
    path("<slug:slug>/settings/update/", views.space_update, name="space_update"),
    path("<slug:slug>/delete/", views.space_delete, name="space_delete"),
]
