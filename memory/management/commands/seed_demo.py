from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from memory.models import Search
from memory.services import search_start
from memory.services.demo import DEMO_SEARCH_QUESTIONS, demo_memory_seed
from memsite.demo import DEMO_PASSWORD, DEMO_USERNAME, demo_principal, demo_require_debug
from memsite.errors import ServiceUnavailable
from memsite.spaces.logic import Role
from memsite.spaces.selectors import space_default
from memsite.spaces.services import membership_set


class Command(BaseCommand):
    help = "Add the demo memory and a demo staff login, owner of the default space (idempotent); print how to log in."

    def add_arguments(self, parser):
        parser.add_argument("--url", default="http://127.0.0.1:8000/", help="Where memsite will be served.")

    def handle(self, *args, url: str, **options):
        demo_require_debug(command="seed_demo")
        User = get_user_model()
        user, created = User.objects.get_or_create(
            username=DEMO_USERNAME, defaults={"is_staff": True, "is_superuser": True}
        )
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save(update_fields=["password"])
        space = space_default()
        membership_set(space=space, member=user, role=Role.OWNER)
        by = demo_principal(space=space)
        added = demo_memory_seed(by=by)
        self.stdout.write("Demo memory added." if added else "Demo memory is already there.")
        if not Search.objects.exists():
            try:
                search = search_start(by=by, questions=DEMO_SEARCH_QUESTIONS, output="answer")
            except ServiceUnavailable as error:
                self.stdout.write(f"Demo search not queued: {error.message}")
            else:
                self.stdout.write(
                    f"Demo search {search.pk} queued: the worker runs it; watch it at {url}searches/{search.pk}/"
                )
        self.stdout.write(
            self.style.SUCCESS(f"\nmemsite: open {url} and log in as {DEMO_USERNAME} / {DEMO_PASSWORD} (staff).\n")
        )
