"""The shape of app/ (docs/architecture/index.md): every module imports on its own, imports run
only down the layers, the surfaces never import each other, and no two modules import each
other."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app"

# Lowest first. A module may import its own layer and the ones below it, never one above.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("app.extensions", "app.observability", "app.instance_files", "app.version")),
    ("db", ("app.db", "app.models")),
    ("infra", ("app.infra",)),
    ("domain", ("app.domain",)),
    ("web", ("app.web",)),
    ("surfaces", ("app.api", "app.pages", "app.console", "app.oauth", "app.oidc")),
    ("factory", ("app", "app.cli", "app.config")),
]
SURFACES = ("app.api", "app.pages", "app.console", "app.oauth", "app.oidc")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(APP.rglob("*.py"))}


def _owner(module: str, prefixes: tuple[str, ...]) -> str | None:
    """The longest of `prefixes` that `module` is, or is inside of."""
    found = [p for p in prefixes if module == p or module.startswith(p + ".")]
    return max(found, key=len) if found else None


def _layer(module: str) -> int:
    every = tuple(prefix for _, prefixes in LAYERS for prefix in prefixes)
    owner = _owner(module, every)
    assert owner is not None, f"{module} is in no layer: add it to LAYERS"
    return next(i for i, (_, prefixes) in enumerate(LAYERS) if owner in prefixes)


def _imports(module: str) -> set[str]:
    """The app modules `module` imports, anywhere in it (inside functions too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in MODULES)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:  # `from app.domain import accounts` names a module
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in MODULES else node.module)
    return {name for name in found if name in MODULES and name != module}


def test_the_layers_cover_every_module():
    for module in MODULES:
        _layer(module)


def test_imports_run_down_the_layers_only():
    upward = [f"{module} imports {imported}"
              for module in MODULES for imported in _imports(module)
              if _layer(imported) > _layer(module)]
    assert upward == []


def test_the_api_the_pages_and_provider_sign_in_never_import_each_other():
    crossing = []
    for module in MODULES:
        surface = _owner(module, SURFACES)
        for imported in _imports(module):
            other = _owner(imported, SURFACES)
            if surface and other and other != surface:
                crossing.append(f"{module} imports {imported}")
    assert crossing == []


def test_no_modules_import_each_other_even_through_others():
    graph = {module: _imports(module) for module in MODULES}
    cycles: list[list[str]] = []
    state: dict[str, str] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                cycles.append([*path[path.index(imported):], imported])
            elif imported not in state:
                visit(imported, [*path, imported])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


# The domain's rooms (docs/architecture/index.md), and the rooms each may use besides the domain's
# basics (its top-level modules: audit, clock, errors, text, addresses, services). A room may use
# the rooms below it, never one above: a rule reaches its subject's room through the rooms it
# builds on.
# The top-level modules that tie rooms together (TIES) may use any.
ROOMS: dict[str, tuple[str, ...]] = {
    "tokens": (),
    "clients": ("tokens",),
    "mail": ("tokens",),
    "limits": ("clients", "tokens"),
    "sessions": ("clients", "tokens"),
    "oidc": ("sessions", "clients", "tokens"),
    "factors": ("sessions", "limits", "mail", "tokens"),
    "accounts": ("factors", "sessions", "limits", "mail", "clients", "tokens"),
    "lifecycle": ("accounts", "factors", "sessions", "limits", "mail", "clients", "tokens",
                  "oidc"),
    "admin": ("lifecycle", "accounts", "factors", "sessions", "limits", "mail", "clients",
              "tokens"),
}
BASICS = ("audit", "clock", "device_names", "errors", "events", "text", "addresses", "services")
# The top-level modules over the rooms.
TIES = ("sign_in", "mail_jobs", "deliveries", "retention", "health", "new_devices")


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if parts[:2] == ["app", "domain"] and len(parts) > 3 else None


def _room_crossings(imports: dict[str, set[str]]) -> list[str]:
    crossing = []
    for module, imported_modules in imports.items():
        room = _room(module)
        if room is None:
            continue
        for imported in imported_modules:
            other = _room(imported)
            if other is not None and other != room and other not in ROOMS[room]:
                crossing.append(f"{module} imports {imported}")
            basic = imported.removeprefix("app.domain.")
            if other is None and imported.startswith("app.domain.") and basic not in BASICS:
                crossing.append(f"{module} imports {imported}")
    return crossing


def test_every_room_of_the_domain_is_known():
    rooms = {_room(module) for module in MODULES} - {None}
    assert rooms == set(ROOMS)
    tops = {m.removeprefix("app.domain.") for m in MODULES
            if m.startswith("app.domain.") and _room(m) is None and m.count(".") == 2}
    assert tops - set(ROOMS) - set(BASICS) - set(TIES) == set()


def test_each_room_uses_only_the_rooms_below_it():
    assert _room_crossings({module: _imports(module) for module in MODULES}) == []


def test_the_room_rules_catch_what_they_forbid():
    """A room reaching up (accounts is above factors) or into a module that ties rooms together
    is refused; one reaching down, or to a basic, is not."""
    assert _room_crossings({"app.domain.factors.codes": {"app.domain.accounts.accounts"}})
    assert _room_crossings({"app.domain.sessions.sessions": {"app.domain.sign_in"}})
    assert not _room_crossings({"app.domain.accounts.accounts": {
        "app.domain.factors.second_factors", "app.domain.audit"}})


# The tables each room owns: only it writes them with a statement (update, delete, insert, add).
# The basics and the modules that tie rooms together (audit, events, deliveries, retention...)
# write their own tables and sweep old rows; they are not rooms. What this cannot see: changing an
# attribute of a row another room loaded (`user.email = ...`), which goes through that room's
# functions by review.
TABLES: dict[str, tuple[str, ...]] = {
    "accounts": ("User", "Identity", "OneTimeToken"),
    "sessions": ("AuthSession", "RefreshToken", "HandoffCode"),
    "factors": ("PendingSignIn", "TotpFactor", "RecoveryCode", "Passkey", "PasskeyChallenge"),
    "limits": ("FailureCounter", "RateLimitCounter"),
    "mail": ("MailJob",),
    "oidc": ("PushedRequest", "ConsentGrant"),
    "clients": ("ClientSite", "ServiceClient", "SiteRegistryMark"),
    "admin": ("IdempotentAnswer",),
    "lifecycle": (),
    "tokens": (),
}
# Writes into another room's table, each with its reason; the list should only shrink.
FOREIGN_WRITES: dict[tuple[str, str], str] = {
    # Erasing an account (leaving.py) deletes what every room kept of it, in one transaction.
    ("app.domain.lifecycle.leaving", "RefreshToken"): "erasure",
    ("app.domain.lifecycle.leaving", "MailJob"): "erasure",
    ("app.domain.lifecycle.leaving", "PushedRequest"): "erasure",
    # An address change ends the mailed links to the old address with the change.
    ("app.domain.lifecycle.address_change", "OneTimeToken"): "links of the old address",
    # OpenID Connect's authorization codes are handoff codes bound to a client.
    ("app.domain.oidc.authorization", "HandoffCode"): "an authorization code",
    # sessions.revoke_all ends the pending second steps; sessions sit below factors, so it
    # cannot call factors/pending.py (docs/decisions.md, "Room walls and tables").
    ("app.domain.sessions.sessions", "PendingSignIn"): "revoke_all",
}
_WRITERS = {"update", "delete", "insert", "insert_values", "add_unless_taken", "claim_once",
            "delete_batched"}


def _tables_written(module: str) -> set[str]:
    """The mapped classes `module` writes with a statement: update(X), delete(X), insert(X),
    the db/ helpers given X, or session.add(X(...))."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = (node.func.attr if isinstance(node.func, ast.Attribute)
                else getattr(node.func, "id", None))
        first = node.args[0]
        if name in _WRITERS and isinstance(first, ast.Name):
            found.add(first.id)
        elif name == "add" and isinstance(first, ast.Call) and isinstance(first.func, ast.Name):
            found.add(first.func.id)
    return found


def _foreign_writes(written: dict[str, set[str]]) -> set[tuple[str, str]]:
    owner = {table: room for room, tables in TABLES.items() for table in tables}
    return {(module, table) for module, tables in written.items() for table in tables
            if _room(module) is not None and table in owner and owner[table] != _room(module)}


def test_each_room_writes_only_its_own_tables():
    written = {module: _tables_written(module) for module in MODULES if _room(module)}
    assert set(TABLES) == set(ROOMS)
    assert _foreign_writes(written) == set(FOREIGN_WRITES)


def test_the_table_rule_catches_a_write_into_another_room():
    module = "app.domain.accounts.accounts"
    assert _foreign_writes({module: {"PendingSignIn", "User"}}) == {(module, "PendingSignIn")}
    assert not _foreign_writes({"app.domain.retention": {"PendingSignIn"}})  # a tie may sweep


def test_the_rules_catch_what_they_forbid():
    """The checks above are not vacuous: they see imports inside functions and from-imports."""
    assert "app.web.browser" in _imports("app.pages.auth")
    assert "app.domain.mail_jobs" in _imports("app")  # imported inside create_app
    assert _layer("app.web.targets") > _layer("app.domain.sessions.handoff") > _layer("app.db.rows")


MAX_MODULE_LINES = 400
MAX_VIEW_LINES = 30
# Over the limit for now, each with its reason; the list should only shrink.
LONG_MODULES: dict[str, str] = {}  # module: why it may be longer, for now
ROUTE_DECORATORS = {"get", "post", "put", "patch", "delete", "route"}


def test_no_module_is_over_400_lines():
    lines = {module: len(path.read_text().splitlines()) for module, path in MODULES.items()}
    over = {module for module, count in lines.items() if count > MAX_MODULE_LINES}
    assert over - set(LONG_MODULES) == set()
    assert set(LONG_MODULES) - over == set()  # back under the limit: drop its allowance


def _views(module: str) -> list[ast.FunctionDef]:
    """The functions of `module` decorated with a route (`@bp.get(...)`, `@bp.route(...)`...)."""
    found = []
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.FunctionDef) and any(
                isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
                and decorator.func.attr in ROUTE_DECORATORS
                for decorator in node.decorator_list):
            found.append(node)
    return found


def test_no_view_is_over_30_lines():
    """From its `def` to its last line: a view parses, calls the domain and answers."""
    views = {f"{module}.{view.name}": (view.end_lineno or view.lineno) - view.lineno + 1
             for module in MODULES for view in _views(module)}
    assert len(views) > 50  # the check sees the views
    assert {name: lines for name, lines in views.items() if lines > MAX_VIEW_LINES} == {}


# Run in one fresh interpreter: before each module, every app module is forgotten, so each one is
# imported with nothing of the app loaded before it. Third-party libraries stay loaded (they cannot
# hide a cycle of ours, and loading them once keeps this quick), except prometheus_client, whose
# registry would refuse our metrics the second time.
# Importing `a.b` imports its package `a` first and stops there if that loaded `a.b` too: a module
# that its package's own import loads has nothing of its own to show, its import is its package's,
# already done (packages sort before their modules). That skips most of them.
_IMPORT_EACH = """
import importlib, sys, traceback
failed, loaded_by = [], {}
for name in sys.argv[1:]:
    package = name.rpartition(".")[0]
    if name in loaded_by.get(package, ()):
        loaded_by[name] = loaded_by[package]
        continue
    for loaded in [m for m in sys.modules if m.split(".")[0] in ("app", "prometheus_client")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception:
        failed.append(name + ": " + traceback.format_exc(limit=-3))
        continue
    loaded_by[name] = {m for m in sys.modules if m.split(".")[0] == "app"}
print("\\n".join(failed))
"""


def test_every_module_imports_on_its_own():
    result = subprocess.run([sys.executable, "-W", "ignore", "-c", _IMPORT_EACH, *sorted(MODULES)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == ""


def test_importing_each_module_on_its_own_finds_a_cycle(tmp_path):
    """The check above fails for the mistake it guards against: a module that needs a name from
    a module that is still being imported (the partially initialised module of a cycle)."""
    package = tmp_path / "app"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "first.py").write_text("from app.second import B\nA = 1\n")
    (package / "second.py").write_text("from app.first import A\nB = 2\n")
    result = subprocess.run([sys.executable, "-c", _IMPORT_EACH, "app.first"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60, check=False)
    assert "partially initialized" in result.stdout
