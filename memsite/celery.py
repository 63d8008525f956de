import gc
import os

from celery import Celery
from celery.signals import worker_process_init, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memsite.settings")

app = Celery("memsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def _freeze_loaded_objects(**kwargs: object) -> None:
    """As in memsite/wsgi.py: keep the long-lived objects of a worker process out of the
    collector's full passes."""
    gc.freeze()


# Prefork and solo pools announce each process that runs tasks; the threads pool (the
# Procfile's) runs them in the main process, which is ready once the pool is up.
worker_process_init.connect(_freeze_loaded_objects, weak=False)
worker_ready.connect(_freeze_loaded_objects, weak=False)
