"""The agent a request's path names, shared by the pages and the API of the context, brains and
graphs apps: the agent of the request's space; another space's is a 404, as a missing one."""

from django.http import Http404, HttpRequest
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework.request import Request

from agents.context import selectors
from agents.context.models import Agent
from memsite.errors import ServiceError
from memsite.spaces.principals import principal_of

AGENT_ID = OpenApiParameter("agent_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The agent's id.")


def agent_of(request: Request | HttpRequest, agent_id: int) -> Agent:
    """The API's: NotFound (404) for an agent of no space of the request's."""
    return selectors.agent_get(space=principal_of(request).space, agent_id=agent_id)


def agent_or_404(request: HttpRequest, agent_id: int) -> Agent:
    """A page's: Django's 404 page rather than the API's refusal."""
    try:
        return agent_of(request, agent_id)
    except ServiceError as error:
        raise Http404(error.message) from None
