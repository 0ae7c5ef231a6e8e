"""The `flask` commands, run in-process on a test's app."""

from __future__ import annotations

from typing import Any

from click.testing import Result
from flask import Flask


def run(app: Flask, *args: Any, input: str | None = None) -> Result:  # noqa: A002 (click's name)
    return app.test_cli_runner().invoke(args=list(args), input=input)


def table(output: str) -> tuple[dict[str, str], str]:
    """The rows of `users list` as {email: row cells}, and the last line when it is no row."""
    lines = output.splitlines()
    assert lines[0].split() == ["EMAIL", "NAME", "PLAN", "STATUS", "OPERATOR", "CREATED"]
    rows = [line for line in lines[1:] if "@" in line.split("  ")[0]]
    return {row.split()[0]: row for row in rows}, lines[-1]
