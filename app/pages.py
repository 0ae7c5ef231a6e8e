"""Hosted pages (server-rendered HTML)."""

from __future__ import annotations

from flask import Blueprint, render_template, request

from app.api.shaping import client_info
from app.domain import recovery
from app.domain.errors import AuthError

bp = Blueprint("pages", __name__)


@bp.get("/confirm-email")
def confirm_email() -> tuple[str, int]:
    try:
        user = recovery.confirm_email(request.args.get("token", ""), client_info())
    except AuthError as error:
        return render_template("pages/confirm_email.html", error=error), error.status
    return render_template("pages/confirm_email.html", email=user.email), 200
