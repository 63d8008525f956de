"""The apps' layers: memsite is the project under the apps and imports none of memory's modules
(the apps register what it needs of them, and views declare their own body limits); the tools
sit above memory and the agents, which they call, and only the URLconf imports them."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MEMSITE = ROOT / "memsite"
URLCONF = MEMSITE / "urls.py"


def imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module)
    return modules


def importers_of(package: str, *, under: list[str], allowed: tuple[Path, ...] = ()) -> set[str]:
    """`path: module` for every module of the packages `under` that imports `package`."""
    return {
        f"{path.relative_to(ROOT)}: {module}"
        for name in under
        for path in (ROOT / name).rglob("*.py")
        if path not in allowed
        for module in imported_modules(path)
        if module == package or module.startswith(f"{package}.")
    }


def test_memsite_imports_nothing_from_memory():
    assert importers_of("memory", under=["memsite"]) == set()


def test_only_the_urlconf_imports_the_tools():
    assert importers_of("tools", under=["memsite", "memory", "agents"], allowed=(URLCONF,)) == set()


def test_the_check_finds_an_import(tmp_path):
    module = tmp_path / "views.py"
    module.write_text("from tools.registry import tool_call\nimport memory.models\n")
    assert imported_modules(module) == {"tools.registry", "memory.models"}
