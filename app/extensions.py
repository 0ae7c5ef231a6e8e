"""Extensions, created unbound here and bound to an app in create_app()."""

from __future__ import annotations

from flask import current_app
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_login import LoginManager
from flask_migrate import Migrate
from flask_sqlalchemy import SQLAlchemy
from flask_wtf.csrf import CSRFProtect
from sqlalchemy.orm import DeclarativeBase


class Base(DeclarativeBase):
    pass


# Objects keep their values after commit: a view that commits and then shapes its response
# should not pay a query per attribute to read back what it just wrote.
db = SQLAlchemy(model_class=Base, session_options={"expire_on_commit": False})
migrate = Migrate()
# The client address comes from the socket, or from X-Forwarded-For only through the
# SVC_TRUSTED_PROXIES hops that ProxyFix (set up in create_app) is told to trust.
limiter = Limiter(key_func=get_remote_address)


@limiter.request_filter
def _limits_off_for_this_app() -> bool:
    """One Limiter serves every app of the process, and its `enabled` is whatever the last app
    to start said: each app's own SVC_RATELIMIT_ENABLED decides for its requests. (Production
    runs one app per process; tests build many, with limits on and off.)"""
    return not current_app.config.get("RATELIMIT_ENABLED", True)
login_manager = LoginManager()
csrf = CSRFProtect()
