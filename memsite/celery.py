import gc
import os

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memsite.settings")

app = Celery("memsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def _freeze_loaded_objects(**kwargs: object) -> None:
    """As in memsite/wsgi.py: keep the long-lived objects of a worker process out of the
    collector's full passes."""
    gc.freeze()
