"""What restoring a checkpoint would change of an agent's settings, for the dashboard to say
before it is done. Context variables' values are never shown, only that they differ."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

HIDDEN_VALUES = ("context_variables",)


@dataclass(frozen=True)
class SettingChange:
    field: str
    now: str
    then: str  # as the checkpoint has it


def _shown(value: object) -> str:
    return "none" if value is None else str(value)


def restore_changes(*, current: Mapping[str, object], saved: object, fields: Iterable[str]) -> list[SettingChange]:
    """The settings among `fields` that the checkpoint's saved agent state has otherwise than
    `current`; nothing when the state is not an object (the restore itself refuses it)."""
    if not isinstance(saved, Mapping):
        return []
    changes = []
    for field in fields:
        if field not in saved or saved[field] == current.get(field):
            continue
        if field in HIDDEN_VALUES:
            changes.append(SettingChange(field, "(values hidden)", "different values"))
        else:
            changes.append(SettingChange(field, _shown(current.get(field)), _shown(saved[field])))
    return changes
