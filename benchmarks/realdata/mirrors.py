"""The sets' files, read at run time from the bare git mirrors of their repositories
(`<mirrors>/<owner>+<name>/repo`), at the commit the benchmark names: nothing of them is copied
into this repository."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class MirrorMissing(Exception):
    """The set's mirror is not on this machine, or lacks the commit: the set is skipped."""


@dataclass(frozen=True)
class Mirror:
    repository: str  # owner/name
    commit: str
    git_dir: Path

    @classmethod
    def at(cls, mirrors: Path, repository: str, commit: str) -> Mirror:
        git_dir = mirrors / repository.replace("/", "+") / "repo"
        mirror = cls(repository, commit, git_dir)
        if not git_dir.is_dir():
            raise MirrorMissing(f"no mirror of {repository} at {git_dir}")
        if mirror._git("cat-file", "-t", commit, check=False).strip() != b"commit":
            raise MirrorMissing(f"the mirror at {git_dir} lacks commit {commit}")
        return mirror

    def _git(self, *args: str, check: bool = True) -> bytes:
        done = subprocess.run(["git", "--git-dir", str(self.git_dir), *args], capture_output=True, check=False)
        if check and done.returncode != 0:
            raise MirrorMissing(f"git {' '.join(args)} in {self.git_dir}: {done.stderr.decode(errors='replace')}")
        return done.stdout

    def read(self, path: str) -> bytes:
        return self._git("show", f"{self.commit}:{path}")

    def json(self, path: str) -> Any:
        return json.loads(self.read(path))

    def json_lines(self, path: str) -> list[Any]:
        return [json.loads(line) for line in self.read(path).decode().splitlines() if line.strip()]

    def names(self, folder: str) -> list[str]:
        """The entries directly under `folder` at the commit, as paths."""
        listing = self._git("ls-tree", "--name-only", self.commit, folder.rstrip("/") + "/")
        return listing.decode().split("\n")[:-1]
