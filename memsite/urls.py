from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from agents.brains import urls as brain_urls
from agents.brains.api import urls as brain_api_urls
from agents.context import urls as context_urls
from agents.context.api import urls as context_api_urls
from agents.graphs import urls as graph_urls
from dashboard import views as dashboard_views
from memsite import login, views
from memsite.concurrency import concurrency_exempt
from memsite.quotas.api import UsageApi
from memsite.spaces.middleware import outside_spaces

handler404 = "memsite.views.page_not_found"
handler500 = "memsite.views.server_error"

urlpatterns = [
    path("", dashboard_views.home, name="home"),
    path("healthz", concurrency_exempt(outside_spaces(views.healthz)), name="healthz"),
    path("favicon.ico", concurrency_exempt(outside_spaces(views.favicon)), name="favicon"),
    # Any logged-in user may log in again or out, member of a space or not.
    path("login/", outside_spaces(login.login), name="login"),
    path("logout/", outside_spaces(auth_views.LogoutView.as_view()), name="logout"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", views.ApiDocsView.as_view(url_name="api-schema"), name="api-docs"),
    # An agent's routes, its brain's among them, share one namespace across the two apps.
    path("api/agents/", include((context_api_urls.urlpatterns + brain_api_urls.urlpatterns, "agents-api"))),
    path("api/graphs/", include("agents.graphs.api.urls")),
    path("api/usage/", UsageApi.as_view(), name="api-usage"),
    path("api/spaces/", include("memsite.spaces.api.urls")),
    path("api/tools/", include("tools.api.urls")),
    path("api/", include("memory.api.urls")),
    path("llm/", include("memsite.llm.urls")),
    path("spaces/", include("memsite.spaces.urls")),
    path("", include((context_urls.urlpatterns + brain_urls.urlpatterns + graph_urls.urlpatterns, "agents"))),
    path("", include("memory.urls")),
]
