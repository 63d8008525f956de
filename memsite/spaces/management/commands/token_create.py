from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from memsite.errors import ServiceError
from memsite.spaces.logic import DEFAULT_SPACE, Role
from memsite.spaces.selectors import space_get_by_slug
from memsite.spaces.services import token_create


class Command(BaseCommand):
    help = "Make an API token for a member of a space and print its key, which is shown only this once."

    def add_arguments(self, parser):
        parser.add_argument("--user", dest="username", required=True, help="The username the token acts for.")
        parser.add_argument(
            "--space", dest="slug", default=DEFAULT_SPACE, help=f"The space's slug; {DEFAULT_SPACE} if not given."
        )
        parser.add_argument("--name", default="made by token_create", help="What the token is for, as lists show it.")
        parser.add_argument(
            "--role",
            choices=list(Role),
            help="At most the user's own role; editor by default (or the user's role, if lower).",
        )
        parser.add_argument(
            "--manage",
            action="store_true",
            help="The manage scope: with --role owner, the token manages the space (members, tokens, settings, "
            "deleting it). Never with --write-under.",
        )
        parser.add_argument(
            "--write-under", default="", help="It writes only under this tree path, like /swarmstar/nodes/a/."
        )
        parser.add_argument("--expires-days", type=int, help="Days until it expires; it never does without this.")

    def handle(
        self,
        *args,
        username: str,
        slug: str,
        name: str,
        role: str | None,
        manage: bool,
        write_under: str,
        expires_days: int | None,
        **_,
    ):
        member = get_user_model().objects.filter(username=username).first()
        if member is None:
            raise CommandError(f"No user '{username}'.")
        if expires_days is not None and expires_days < 1:
            raise CommandError("--expires-days must be 1 or more.")
        expires_at = timezone.now() + timedelta(days=expires_days) if expires_days is not None else None
        try:
            made = token_create(
                member=member,
                space=space_get_by_slug(slug=slug),
                name=name,
                role=role,
                manage=manage,
                write_under=write_under,
                expires_at=expires_at,
            )
        except ServiceError as error:
            raise CommandError(error.message) from None
        token = made.token
        scope = ", managing it" if token.manage else ""
        self.stderr.write(
            f"Token '{token.name}' for {username}, {token.role} in '{token.space.slug}'{scope}. Its key, shown once:"
        )
        self.stdout.write(made.key)
