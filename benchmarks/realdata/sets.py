"""The sets the benchmark knows: each one's repository, the commit read, and its loader."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.realdata import beam, cosqa, hipporag, madial, prefeval, realmem
from benchmarks.realdata.mirrors import Mirror
from benchmarks.realdata.shape import Dataset


@dataclass(frozen=True)
class Source:
    name: str
    repository: str
    commit: str
    loader: Callable[[Mirror, str], Dataset]
    default: bool = True  # run unless --sets names others

    def load(self, mirrors: Path) -> Dataset:
        """The set read from its mirror under `mirrors`; MirrorMissing when it is not there."""
        return self.loader(Mirror.at(mirrors, self.repository, self.commit), self.name)


SOURCES = (
    Source("beam-100k", beam.REPOSITORY, beam.COMMIT, lambda mirror, name: beam.load(mirror, name, "100K")),
    # A 500K chat is some 35,000 passages to embed: run when asked for.
    Source(
        "beam-500k", beam.REPOSITORY, beam.COMMIT, lambda mirror, name: beam.load(mirror, name, "500K"), default=False
    ),
    Source("realmem", realmem.REPOSITORY, realmem.COMMIT, realmem.load),
    Source("madial-en", madial.REPOSITORY, madial.COMMIT, madial.load),
    Source("prefeval-explicit", prefeval.REPOSITORY, prefeval.COMMIT, prefeval.load),
    Source("cosqa", cosqa.REPOSITORY, cosqa.COMMIT, cosqa.load),
    Source("hotpotqa", hipporag.REPOSITORY, hipporag.COMMIT, hipporag.load_hotpotqa),
    Source("musique", hipporag.REPOSITORY, hipporag.COMMIT, hipporag.load_musique),
)
BY_NAME = {source.name: source for source in SOURCES}
DEFAULT = tuple(source.name for source in SOURCES if source.default)
