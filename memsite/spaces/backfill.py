"""What the migrations that gave data a space run: every row made before spaces joins the
default space. Kept here, not in each migration, so that every app backfills the same way."""

from django.db import migrations

DEFAULT_SPACE = "default"


def into_default_space(app_label: str, *model_names: str) -> migrations.RunPython:
    """An operation that puts every row of the models without a space into the default space;
    going back leaves the rows as they are, for the column's removal to drop."""

    def backfill(apps, schema_editor):
        space, _ = apps.get_model("spaces", "Space").objects.get_or_create(
            slug=DEFAULT_SPACE, defaults={"name": "Default"}
        )
        for name in model_names:
            apps.get_model(app_label, name).objects.filter(space__isnull=True).update(space=space)

    return migrations.RunPython(backfill, migrations.RunPython.noop)
