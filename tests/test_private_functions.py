"""The two places that reach into a library's private functions, because the library offers no
public way (docs/decisions.md, "Library private functions"), and the versions pinned for them in
pyproject.toml: each test fails when the private function changes shape, before a silent
wrong behaviour could."""

from __future__ import annotations

import ast
import inspect
from functools import partial

from flask import Flask
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from werkzeug.routing import Map, Rule, rules


def test_flask_limiter_registers_the_hooks_web_ratelimits_wraps():
    """app/web/ratelimits.py `only_on_limited_views` finds the limiter's before-request check
    by identity and its header hook as a partial of `Limiter` whose name ends in
    inject_headers; and wraps the check as a function of no arguments."""
    app = Flask(__name__)
    limiter = Limiter(get_remote_address, app=app, storage_uri="memory://")
    assert limiter._check_request_limit in app.before_request_funcs[None]
    hooks = [hook for hook in app.after_request_funcs[None] if isinstance(hook, partial)
             and hook.args == (limiter,) and hook.func.__name__.endswith("inject_headers")]
    assert len(hooks) == 1
    parameters = inspect.signature(limiter._check_request_limit).parameters
    assert all(p.default is not inspect.Parameter.empty for p in parameters.values())
    assert list(inspect.signature(hooks[0]).parameters) == ["response"]


def test_werkzeug_rule_compiles_its_builder_as_tests_support_apps_shares_it():
    """tests/support/apps.py shares `Rule._compile_builder(rule, append_unknown)` between the
    test apps, keyed by the rule's `_trace` (read from werkzeug's source: the tests' own
    Rule has it replaced)."""
    rule_class = next(node for node in ast.walk(ast.parse(inspect.getsource(rules)))
                      if isinstance(node, ast.ClassDef) and node.name == "Rule")
    method = next(node for node in rule_class.body
                  if isinstance(node, ast.FunctionDef) and node.name == "_compile_builder")
    assert [argument.arg for argument in method.args.args] == ["self", "append_unknown"]
    rule = Rule("/users/<user_id>")
    Map([rule])
    assert isinstance(rule._trace, list) and rule._trace
    assert callable(rule._compile_builder(True))
