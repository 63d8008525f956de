"""No function in the apps, the benchmarks or the client runs over 60 lines."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 60


def long_functions(root: Path, package: str) -> list[str]:
    found = []
    for path in sorted((root / package).rglob("*.py")):
        if "migrations" in path.parts:
            continue  # written by makemigrations
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_LINES:
                    found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({lines} lines)")
    return found


@pytest.mark.parametrize("package", ["memsite", "memory", "agents", "tools", "dashboard", "benchmarks", "client"])
def test_functions_are_sixty_lines_at_most(package):
    assert long_functions(ROOT, package) == []


def test_the_check_finds_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(f"def long():\n{body}\n\n\ndef short():\n    pass\n")
    assert long_functions(tmp_path, "pkg") == ["pkg/mod.py:1 long (61 lines)"]
