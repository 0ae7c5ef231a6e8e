"""One copy of each test helper: a module-level function of tests/ (not a test, a fixture or a
pytest hook) is defined once. The same body under two names fails here, and so does the same name
in two files (a leading underscore aside) unless tests/helpers_twice.txt lists it: the names that
still have a small wrapper of their own in several modules, a list that only shrinks. A helper
belongs in tests/support/, imported where it is used."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from tests.support.lists import listed

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"

ALLOWED = TESTS / "helpers_twice.txt"


def modules() -> list[Path]:
    return sorted(path for path in TESTS.rglob("*.py")
                  if "node_modules" not in path.parts and "__pycache__" not in path.parts)


def is_fixture(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in ("fixture", "hookimpl"):
            return True
    return False


def helpers(path: Path) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [node for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and not node.name.startswith(("test_", "pytest_")) and not is_fixture(node)]


def body_of(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The function as the AST sees it, whatever its name, docstring and decorators."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return ast.dump(ast.Module(body=[*body], type_ignores=[])) + ast.dump(node.args)


def where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"


def names_defined_twice() -> dict[str, list[str]]:
    places: dict[str, list[str]] = defaultdict(list)
    for path in modules():
        for node in helpers(path):
            places[node.name.lstrip("_")].append(where(path, node))
    return {name: found for name, found in places.items() if len(found) > 1}


def test_no_helper_name_is_defined_in_two_files() -> None:
    twice = {name: found for name, found in names_defined_twice().items()
             if name not in listed(ALLOWED)}
    assert not twice, f"helpers defined more than once (one copy in tests/support/): {twice}"


def test_the_list_of_names_defined_twice_only_shrinks() -> None:
    once = sorted(listed(ALLOWED) - set(names_defined_twice()))
    assert not once, f"defined once now: strike them from {ALLOWED.name}: {once}"


def test_no_helper_body_is_written_twice() -> None:
    places: dict[str, list[str]] = defaultdict(list)
    for path in modules():
        for node in helpers(path):
            if sum(1 for _ in ast.walk(node)) >= 12:  # not `return {}` and the like
                places[body_of(node)].append(f"{where(path, node)} {node.name}")
    twice = [found for found in places.values() if len(found) > 1]
    assert not twice, f"the same helper under several names (keep one in tests/support/): {twice}"


def test_the_checks_see_a_copied_helper_and_pass_tests_and_fixtures(tmp_path: Path) -> None:
    source = ('import pytest\n\n@pytest.fixture\ndef client():\n    return 1\n\n'
              'def test_x():\n    pass\n\n'
              'def b64url(data):\n    """Doc."""\n    return base64.urlsafe_b64encode(data)'
              '.rstrip(b"=").decode()\n\n'
              'def _encode(data):\n    return base64.urlsafe_b64encode(data).rstrip(b"=")'
              '.decode()\n')
    module = tmp_path / "test_copy.py"
    module.write_text(source, encoding="utf-8")
    found = helpers(module)
    assert [node.name for node in found] == ["b64url", "_encode"]
    assert body_of(found[0]) == body_of(found[1])
