import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memsite.settings")
# Imported once the settings are named: importing it reads them (through DRF).
from memsite.limits import BodyReadTimeout  # noqa: E402

# A stalled request body is a 408, not a gunicorn thread held (memsite.limits).
application = BodyReadTimeout(get_wsgi_application())

# What is loaded by now (Django, the apps, their modules) lives as long as the process. Frozen,
# it is left out of the collector's full passes, which otherwise walk some 100,000 objects
# (40-60 ms here) in the middle of a request: the slowest tenth of context assemblies.
gc.freeze()
