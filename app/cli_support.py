"""What every operator command shares."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from app.domain.errors import AuthError
from app.extensions import db


def friendly_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Domain errors end the command with their message, not a traceback."""

    @wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except AuthError as error:
            db.session.rollback()
            details = "; ".join(e["detail"] for e in getattr(error, "errors", [])) or error.detail
            raise click.ClickException(details) from None

    return run
