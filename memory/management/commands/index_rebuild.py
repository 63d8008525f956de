from django.core.management.base import BaseCommand

from memory.index.writes import embed_pending, index_rebuild


class Command(BaseCommand):
    help = "Cut every node's text into passages anew (vectors of unchanged passages are kept)."

    def add_arguments(self, parser):
        parser.add_argument("--embed", action="store_true", help="Also compute every missing vector now.")

    def handle(self, *args, embed: bool, **options):
        written = index_rebuild()
        self.stdout.write(f"{written} passages written.")
        if embed:
            self.stdout.write(f"{embed_pending()} passages embedded.")
