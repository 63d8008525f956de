"""Moving the test database between migrations, for the tests of data migrations. A test that
goes back must end with `migrate_to_latest()`, so the tests after it find today's schema."""

from django.apps.registry import Apps
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate_to(*targets: tuple[str, str | None]) -> Apps:
    """Migrate to `targets` (an app and a migration; None for before its first) and return the
    models as they were there."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(list(targets))
    executor.loader.build_graph()
    return executor.loader.project_state([target for target in targets if target[1]]).apps


def migrate_to_latest() -> Apps:
    """Back to the schema the other tests expect: every app's latest migration."""
    return migrate_to(*MigrationExecutor(connection).loader.graph.leaf_nodes())


def old_node(apps: Apps, *, path: str, name: str, description: str, space_id: int, text: str | None = None):
    """A top-level node as the models were at `apps` (a document when it has `text`, else a
    folder), with its label passage: for data migrations to find."""
    Node, Passage = apps.get_model("memory", "Node"), apps.get_model("memory", "Passage")
    node = Node.objects.create(
        path=path,
        depth=1,
        numchild=0,
        type="document" if text is not None else "folder",
        is_folder=text is None,
        name=name,
        description=description,
        space_id=space_id,
    )
    if text is not None:
        apps.get_model("memory", "NodeContent").objects.create(
            node=node, data=text.encode(), size=len(text), sha256="0" * 64
        )
    Passage.objects.create(node=node, seq=0, kind="label", start=0, end=0, text=f"{name}\n{description}")
    return node
