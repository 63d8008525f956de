"""memsite's settings, one module a topic; `memsite.settings` is the DJANGO_SETTINGS_MODULE.
Every value that varies between deployments is read through `env`; INSTALLED_APPS and
MIDDLEWARE are in base.py."""

from memsite.settings.base import *
from memsite.settings.brains import *
from memsite.settings.context import *
from memsite.settings.database import *
from memsite.settings.graphs import *
from memsite.settings.limits import *
from memsite.settings.llm import *
from memsite.settings.mcp import *
from memsite.settings.queue import *
from memsite.settings.search import *
