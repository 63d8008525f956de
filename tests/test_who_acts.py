"""Who acts is passed one way: a function takes `by`, a Principal, and none of the other ways of
saying who acts (a user, an actor, a principal by another name, a space or their ids) beside
it, nor several of them without it. The functions that build a principal from its parts are
the only ones that take those parts. Explained in docs/spaces.md."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = ["memsite", "memory", "agents", "tools", "dashboard"]
# What says who acts. A token or a member given as what a call acts on (a token revoked, the
# member whose role is set) is no one acting, and is named for what it is.
WHO_ACTS = {"by", "principal", "actor", "actor_id", "user", "user_id", "changer", "space", "space_id"}
# They build a principal from the ids a row keeps, or read what a principal is made of.
BUILDERS = {
    ("memsite/spaces/principals.py", "principal_rebuilt"),
    ("memsite/spaces/principals.py", "_user_rebuilt"),
}


def identity_arguments() -> dict[tuple[str, str, int], list[str]]:
    """(path, function, line): the parameters saying who acts, of every function with more than one."""
    found = {}
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    arguments = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                    named = [argument.arg for argument in arguments if argument.arg in WHO_ACTS]
                    if len(named) > 1:
                        found[(str(path.relative_to(ROOT)), node.name, node.lineno)] = named
    return found


def test_no_function_takes_who_acts_in_more_than_one_way():
    several = {key: named for key, named in identity_arguments().items() if key[:2] not in BUILDERS}
    assert several == {}


def test_the_builders_are_still_there():
    """A builder renamed or gone leaves its entry here allowing nothing."""
    assert BUILDERS <= {key[:2] for key in identity_arguments()}
