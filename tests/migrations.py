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
