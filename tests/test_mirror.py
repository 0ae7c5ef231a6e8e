"""The tests mirror app/: a newcomer changing `app/<path>/<module>.py` finds its tests in
`tests/unit/<path>/test_<module>.py`, or in `test_<module>_<aspect>.py` beside it when a module's
tests are split by what they hold. A package's `__init__.py` that defines anything is tested in
`tests/unit/<path>/<package>/test_<package>.py` (`app/__init__.py`: `tests/unit/test_app.py`).

The modules that have no such file yet are listed in tests/unmirrored.txt, and the list only
shrinks: a module missing from it without a test fails here, and so does a listed module that now
has one (strike it from the list) or that no longer exists."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.lists import listed

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app"
UNIT = ROOT / "tests" / "unit"
ALLOWED = ROOT / "tests" / "unmirrored.txt"


def defines_something(path: Path) -> bool:
    """A module counts unless it is a package's `__init__.py` holding only a docstring and
    imports."""
    if path.name != "__init__.py":
        return True
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                 ast.Assign, ast.AnnAssign)) for node in body)


def mirrored_paths(module: Path) -> list[Path]:
    """Where the tests of `module` (a file under app/) belong."""
    relative = module.relative_to(APP)
    if module.name == "__init__.py":
        if relative.parent == Path("."):
            return [UNIT / "test_app.py"]
        folder, name = UNIT / relative.parent, relative.parent.name
    else:
        folder, name = UNIT / relative.parent, module.stem
    return [folder / f"test_{name}.py", *folder.glob(f"test_{name}_*.py")]


def unmirrored() -> set[str]:
    return {str(module.relative_to(ROOT)) for module in sorted(APP.rglob("*.py"))
            if defines_something(module)
            and not any(path.is_file() for path in mirrored_paths(module))}


def test_every_module_of_app_has_its_mirrored_test_file_or_is_listed() -> None:
    missing = sorted(unmirrored() - listed(ALLOWED))
    assert not missing, (
        "modules of app/ without tests/unit/<path>/test_<module>.py (add one; a new module "
        f"is never added to tests/unmirrored.txt): {missing}")


def test_the_list_of_unmirrored_modules_only_shrinks() -> None:
    stale = sorted(listed(ALLOWED) - unmirrored())
    assert not stale, (
        f"these have a mirrored test now, or are gone: strike them from {ALLOWED.name}: {stale}")


def test_the_mirror_rule_finds_a_module_and_its_split_tests(tmp_path: Path) -> None:
    """The rule itself, on app/domain/accounts/passwords.py and app/__init__.py."""
    passwords = APP / "domain" / "accounts" / "passwords.py"
    assert mirrored_paths(passwords)[0] == UNIT / "domain" / "accounts" / "test_passwords.py"
    assert mirrored_paths(APP / "__init__.py") == [UNIT / "test_app.py"]
    package = tmp_path / "__init__.py"
    package.write_text('"""A docstring."""\n\nfrom x import y\n', encoding="utf-8")
    assert not defines_something(package)
    package.write_text("def f():\n    pass\n", encoding="utf-8")
    assert defines_something(package)
