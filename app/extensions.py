"""Extensions, created unbound here and bound to an app in create_app()."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import current_app
from flask_babel import Babel
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_login import LoginManager
from flask_migrate import Migrate
from flask_sqlalchemy import SQLAlchemy
from flask_wtf.csrf import CSRFProtect
from sqlalchemy import MetaData
from sqlalchemy.orm import DeclarativeBase

# Every constraint and index gets a name the code can predict, on every database: migrations
# can drop or alter one by name, and autogenerate compares names. Single-column indexes keep
# the names they always had (ix_<table>_<column>); migration 0008 named the older constraints.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    # On the base class: Flask-SQLAlchemy ignores a `metadata=` argument given with a 2.x base.
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


# Objects keep their values after commit: a view that commits and then shapes its response
# should not pay a query per attribute to read back what it just wrote.
db = SQLAlchemy(model_class=Base, session_options={"expire_on_commit": False})
# The models' base class. db.Model is built at run time, which a type checker cannot follow: to it
# the models extend Base, whose subclass db.Model is.
if TYPE_CHECKING:
    Model = Base
else:
    Model = db.Model
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
# The pages' and the mails' languages (app/web/locale.py); catalogues in app/translations/.
babel = Babel()
