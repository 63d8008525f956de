from django.core.management.base import BaseCommand

from memory.index.writes import index_embed_pending, index_rebuild


class Command(BaseCommand):
    help = (
        "Bring every node's passages in step with its text (those whose text is unchanged are kept, vectors and all)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--embed", action="store_true", help="Also compute every missing vector now.")

    def handle(self, *args, embed: bool, **options):
        written = index_rebuild()
        self.stdout.write(f"{written} passages written anew.")
        if embed:
            # Under the embedding task's lock: the two would embed the same passages.
            self.stdout.write(f"{index_embed_pending(limit=None)} passages embedded.")
