"""What every operator command shares."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from app.domain.errors import AuthError
from app.extensions import db
from app.infra.live_sessions import RevocationUnpublished


def friendly_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Domain errors end the command with their message, not a traceback."""

    @wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except AuthError as error:
            db.session.rollback()
            raise click.ClickException(_said(error)) from None
        except RevocationUnpublished as error:  # committed: only the sharing is late
            raise click.ClickException(str(error)) from None

    return run


def _said(error: AuthError) -> str:
    """The error's own sentence; for one that has only its kind's ("The request body is
    invalid."), what it says of each field."""
    fields = "; ".join(e["detail"] for e in getattr(error, "errors", []))
    return fields if fields and error.detail == type(error).detail else str(error.detail)
