"""A text document as it was at a version, from the rows its writes keep
(`memory.services.versions`), and what changed to it from another. Explained in
docs/memory.md."""

from collections.abc import Collection
from dataclasses import dataclass

from django.db.models import Min

from memory.logic.diff import LineDiff, line_diff
from memory.models import Node, NodeContent, NodeVersion
from memory.types import get_type
from memsite.errors import NotFound


@dataclass(frozen=True)
class DocumentAt:
    """A document's name, description and text at `version`."""

    version: int
    name: str
    description: str
    description_auto: bool
    data: bytes

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")

    def same_as(self, other: "DocumentAt") -> bool:
        """Whether the two read alike: the same name, description and text."""
        return (self.name, self.description, self.data) == (other.name, other.description, other.data)


def _as_now(node: Node, version: int) -> DocumentAt:
    """The document as it is now, which it has been since `version`."""
    data = NodeContent.objects.filter(node_id=node.pk).values_list("data", flat=True).first()
    return DocumentAt(version, node.name, node.description, node.description_auto, bytes(data or b""))


def node_version(*, node: Node, version: int) -> DocumentAt:
    """The document as it was at `version`: the newest row kept at or before it, or the
    document itself when that row holds no copy (it is the newest). NotFound for a node that
    keeps no versions, a version it never had, or one no longer (or never) kept."""
    if not get_type(node.type).keeps_versions:
        raise NotFound(f"'{node.name}' is a {node.type} node; only text documents keep their versions.")
    if not 1 <= version <= node.version:
        raise NotFound(f"'{node.name}' has no version {version}: it is at version {node.version}.")
    if version == node.version:
        return _as_now(node, version)
    row = NodeVersion.objects.filter(node_id=node.pk, version__lte=version).order_by("-version").first()
    if row is None:
        raise NotFound(
            f"Version {version} of '{node.name}' is not kept: a document keeps its last versions only, "
            "and none from before versions were kept."
        )
    if row.data is None:
        return _as_now(node, version)
    return DocumentAt(version, row.name, row.description, row.description_auto, bytes(row.data))


def node_versions_kept(*, node: Node, versions: Collection[int]) -> set[int]:
    """Those of `versions` that `node_version` can give: from the oldest row kept to now."""
    if not get_type(node.type).keeps_versions:
        return set()
    oldest = NodeVersion.objects.filter(node_id=node.pk).aggregate(oldest=Min("version"))["oldest"]
    first = node.version if oldest is None else oldest
    return {version for version in versions if first <= version <= node.version}


# The empty document before the first version, which the first is compared with.
NOTHING = DocumentAt(0, "", "", False, b"")


@dataclass(frozen=True)
class VersionDiff:
    """A version of a document (`shown`) and the diff of its text from another (`against`):
    lines marked + are in `shown` only, those marked - in `against` only. No `against` and no
    diff when the version before, compared by default, is no longer kept."""

    shown: DocumentAt
    against: DocumentAt | None
    diff: LineDiff | None


def node_version_diff(*, node: Node, version: int, against: int | None = None) -> VersionDiff:
    """The document at `version`, against the version `against` (0: NOTHING), by default the
    version before it. NotFound as `node_version` for either, but for a version before that
    is no longer kept."""
    shown = node_version(node=node, version=version)
    if against is None:
        against = version - 1
        if against and not node_versions_kept(node=node, versions=[against]):
            return VersionDiff(shown, None, None)
    older = node_version(node=node, version=against) if against else NOTHING
    return VersionDiff(shown, older, line_diff(older.text, shown.text))
