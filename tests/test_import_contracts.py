"""`make lint`'s import contracts (pyproject.toml, run by lint-imports): the tree keeps them, and
an app that imports another app's pages fails them, named in the output."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("memsite", "memory", "agents", "tools", "dashboard")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def not_python(folder: str, names: list[str]) -> list[str]:
    kept = [name for name in names if name.endswith(".py") or Path(folder, name).is_dir()]
    return [name for name in names if name not in kept or name == "__pycache__"]


def copy_of_the_tree(into: Path) -> Path:
    """The packages' Python files and the configuration: what lint-imports reads."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, into / package, ignore=not_python)
    shutil.copy(ROOT / "pyproject.toml", into)
    return into


def lint_imports(tree: Path) -> subprocess.CompletedProcess:
    # From the tree's root, which lint-imports puts first on sys.path: its packages, not the
    # installed ones (an `agents` package is installed too: openai-agents').
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache", "--no-logo"], cwd=tree, capture_output=True, text=True, timeout=60
    )


def test_a_page_imported_by_another_app_fails_the_lint(tmp_path):
    tree = copy_of_the_tree(tmp_path)
    (tree / "agents" / "brains" / "planted.py").write_text('"""Planted."""\n\nfrom memory.views import node_detail\n')
    linted = lint_imports(tree)
    assert linted.returncode == 1, linted.stdout + linted.stderr
    assert "agents.brains.planted -> memory.views (l.3)" in linted.stdout


def test_a_text_tool_reaching_django_or_the_apps_fails_the_lint(tmp_path):
    tree = copy_of_the_tree(tmp_path)
    planted = '"""Planted."""\n\nfrom django.conf import settings\nfrom memory.rendering import marked\n'
    (tree / "memsite" / "text" / "planted.py").write_text(planted)
    linted = lint_imports(tree)
    assert linted.returncode == 1, linted.stdout + linted.stderr
    assert "memsite.text.planted -> django (l.3)" in linted.stdout
    assert "memsite.text.planted -> memory.rendering (l.4)" in linted.stdout


def test_the_tree_keeps_its_contracts(tmp_path):
    linted = lint_imports(copy_of_the_tree(tmp_path))
    assert linted.returncode == 0, linted.stdout + linted.stderr
    assert "0 broken" in linted.stdout
