from pathlib import Path

from django.apps import AppConfig
from django.conf import settings
from django.contrib.admin import apps as admin_apps


class MemsiteConfig(AppConfig):
    name = "memsite"

    def ready(self) -> None:
        # The filesystem broker needs its folders before the first message is sent.
        if settings.CELERY_BROKER_URL.startswith("filesystem://"):
            for folder in settings.CELERY_BROKER_TRANSPORT_OPTIONS.values():
                if isinstance(folder, str):
                    Path(folder).mkdir(parents=True, exist_ok=True)


class AdminConfig(admin_apps.AdminConfig):
    """Django's admin, on a site whose login counts failed logins like the site's own. Named in
    INSTALLED_APPS; not this app's own configuration (`default`)."""

    default = False
    default_site = "memsite.login.AdminSite"
