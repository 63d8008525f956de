"""The module docstrings of memory, memsite, the agents, the tools and the client stay short;
what they leave out is in docs/."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 5
PACKAGES = ["memory", "memsite", "agents", "tools", "dashboard", "client"]


@pytest.mark.parametrize("package", PACKAGES)
def test_module_docstrings_are_five_lines_at_most(package):
    long = []
    for path in sorted((ROOT / package).rglob("*.py")):
        module = ast.parse(path.read_text(), str(path))
        if ast.get_docstring(module) is not None:
            first = module.body[0]
            if first.end_lineno - first.lineno + 1 > MAX_LINES:
                long.append(str(path.relative_to(ROOT)))
    assert long == []


@pytest.mark.parametrize("package", PACKAGES)
def test_the_docs_they_point_to_exist(package):
    for path in (ROOT / package).rglob("*.py"):
        docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
        for word in docstring.split():
            if word.startswith("docs/"):
                assert (ROOT / word.rstrip(".,;:)")).is_file(), (path, word)
