"""memsite is the project under the apps: it imports none of memory's modules (the apps
register what it needs of them, and views declare their own body limits)."""

import ast
from pathlib import Path

MEMSITE = Path(__file__).resolve().parents[2] / "memsite"


def imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module)
    return modules


def test_memsite_imports_nothing_from_memory():
    offenders = {
        f"{path.relative_to(MEMSITE.parent)}: {module}"
        for path in MEMSITE.rglob("*.py")
        for module in imported_modules(path)
        if module == "memory" or module.startswith("memory.")
    }
    assert offenders == set()
