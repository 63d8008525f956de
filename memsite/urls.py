from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from memsite import login, views
from memsite.quotas.api import UsageApi

handler404 = "memsite.views.page_not_found"
handler500 = "memsite.views.server_error"

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("login/", login.login, name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", views.ApiDocsView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/agents/", include("agents.api.urls")),
    path("api/graphs/", include("agents.api.graph_urls")),
    path("api/usage/", UsageApi.as_view(), name="api-usage"),
    path("api/", include("memory.api.urls")),
    path("llm/", include("memsite.llm.urls")),
    path("", include("agents.urls")),
    path("", include("memory.urls")),
]
