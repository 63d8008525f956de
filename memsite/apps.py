from pathlib import Path

from django.apps import AppConfig
from django.conf import settings


class MemsiteConfig(AppConfig):
    name = "memsite"

    def ready(self) -> None:
        # The filesystem broker needs its folders before the first message is sent.
        if settings.CELERY_BROKER_URL == "filesystem://":
            for folder in settings.CELERY_BROKER_TRANSPORT_OPTIONS.values():
                if isinstance(folder, str):
                    Path(folder).mkdir(parents=True, exist_ok=True)
