"""Every file a comment or docstring of app/ names exists (a comment that names a file must be
kept true when the file moves)."""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app"

# A path with a folder (`sessions/handoff.py`, `docs/architecture/index.md`, `app/infra/`), or a
# file name alone (`throttle.py`). `<code>` in a path is a placeholder: not checked.
PATH = re.compile(r"(?<![\w/.:<>-])((?:[\w.-]+/)+[\w.-]*|[\w-]+\.(?:py|md|html|txt|toml|po|js|css))"
                  r"(?![\w/<>])")
SUFFIXES = (".py", ".md", ".html", ".txt", ".toml", ".po", ".js", ".css", ".json", ".yml")
ROOTS = ("app", "docs", "tests", "migrations", "scripts", "bench", "templates", "static")


def _texts(path: Path) -> Iterator[tuple[int, str]]:
    """The comments and docstrings of a module, with their line."""
    source = path.read_text()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                yield node.body[0].lineno, docstring


def _named(text: str) -> Iterator[str]:
    for found in PATH.findall(text):
        name = found.rstrip(".")
        if name.endswith(SUFFIXES) or name.split("/")[0] in ROOTS:
            yield name


def _exists(name: str, module: Path, names: set[str]) -> bool:
    if "/" not in name:
        return name in names
    # From the repository, app/ or app/domain/ (whose rooms comments name as `factors/...`),
    # or the module's own folder or the one above.
    bases = (ROOT, APP, APP / "domain", module.parent, module.parent.parent)
    return any((base / name).exists() for base in bases)


def _file_names() -> set[str]:
    names = set()
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [name for name in subfolders if not name.startswith(".")
                         and name not in ("node_modules", "__pycache__", "site")]
        names.update(files, subfolders)
        del folder
    return names


def _missing(modules: list[Path]) -> list[str]:
    names = _file_names()
    return sorted(f"{module.relative_to(APP) if module.is_relative_to(APP) else module.name}"
                  f":{line}: {name}"
                  for module in modules for line, text in _texts(module)
                  for name in _named(text) if not _exists(name, module, names))


def test_every_path_a_comment_or_docstring_of_app_names_exists():
    assert _missing(sorted(APP.rglob("*.py"))) == []


def test_a_stale_path_is_found(tmp_path):
    """The check sees paths in comments and docstrings, with or without a folder."""
    module = tmp_path / "stale.py"
    module.write_text('"""See app/domain/pushed_requests.py."""\n\n'
                      "# and factors/pending.py, gone.py, app/translations/<code>/x.po\n")
    assert _missing([module]) == ["stale.py:1: app/domain/pushed_requests.py",
                                  "stale.py:3: gone.py"]
