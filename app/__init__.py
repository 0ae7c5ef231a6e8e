"""svc-auth: the account service of the svc family of client sites."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException
from werkzeug.middleware.proxy_fix import ProxyFix

from app import config, observability
from app.db import transactions
from app.domain import services
from app.domain.accounts.providers import register_providers
from app.extensions import babel, csrf, db, limiter, login_manager, migrate
from app.infra import settings
from app.infra.mail_lane import mail_lane
from app.infra.outbox_worker import OUTBOX_KEY, Outbox
from app.web import locale
from app.web.after_response import OutboxAfterResponse
from app.web.cookie_session import CookieSessionInterface
from app.web.headers import add_security_headers
from app.web.ratelimits import announce_limits, only_on_limited_views

ROOT = Path(__file__).resolve().parent.parent


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    instance_path = (test_config or {}).get("INSTANCE_PATH") or os.environ.get("SVC_INSTANCE_PATH")
    app = Flask(__name__, template_folder=str(ROOT / "templates"),
                static_folder=str(ROOT / "static"), instance_path=instance_path,
                instance_relative_config=True)
    # Every setting parsed and checked here, once: SettingError names a wrong one.
    app.extensions[settings.KEY] = typed = config.load(app, test_config)
    app.session_interface = CookieSessionInterface()
    observability.init_app(app)

    proxies = typed.trusted_proxies
    if proxies:
        app.wsgi_app = ProxyFix(  # type: ignore[method-assign]  # Flask's way to add middleware
            app.wsgi_app, x_for=proxies, x_proto=proxies)

    db.init_app(app)
    transactions.init_app(app)
    migrate.init_app(app, db, directory=str(ROOT / "migrations"), render_as_batch=True,
                     compare_type=True)
    limiter.init_app(app)
    only_on_limited_views(app)
    app.after_request(announce_limits)
    csrf.init_app(app)
    login_manager.init_app(app)
    babel.init_app(app, default_locale=locale.DEFAULT, locale_selector=locale.select)
    app.jinja_env.policies["ext.i18n.trimmed"] = True  # as babel.cfg extracts them
    app.context_processor(locale.template_context)
    app.extensions[services.KEY] = services.build(typed, app.instance_path)
    register_providers(app, typed)
    from app.domain import deliveries
    from app.domain.mail.outbox_ops import OutboxCollector
    from app.domain.mail_jobs import HANDLERS

    # The outbox and the lanes it runs, each with a thread of its own in each process: mail,
    # and the events the client sites hear of. What a request gave a lane is worked on once
    # its answer has been sent.
    app.extensions[OUTBOX_KEY] = outbox = Outbox(
        app, (mail_lane(typed, HANDLERS), deliveries.lane(typed)),
        poll_seconds=typed.outbox_poll_seconds, lease_seconds=typed.outbox_lease_seconds)
    app.extensions[observability.SCRAPED].register(OutboxCollector())
    app.wsgi_app = OutboxAfterResponse(  # type: ignore[method-assign]  # as ProxyFix above
        app.wsgi_app, outbox)

    _register_blueprints(app)
    app.after_request(add_security_headers)

    from app import cli

    cli.register(app)
    return app


def _register_blueprints(app: Flask) -> None:
    from app import console, oauth, oidc, pages
    from app.api import (
        admin,
        cors,
        openapi,
        reference,
        v1,
        v2,
        v2_account,  # noqa: F401  (adds the account's routes to v2's blueprint)
        wellknown,
    )
    from app.web.converters import ProviderConverter

    app.url_map.converters["provider"] = ProviderConverter
    app.register_blueprint(oauth.bp)
    app.register_blueprint(v1.bp)
    app.register_blueprint(v2.bp)
    app.register_blueprint(admin.bp)
    app.register_blueprint(wellknown.bp)
    app.register_blueprint(pages.bp)
    app.register_blueprint(console.bp)
    app.register_blueprint(openapi.bp)
    app.register_blueprint(reference.bp)
    app.register_blueprint(oidc.bp)
    oidc.init_app(app)
    # Bearer tokens and JSON bodies, no cookies: nothing to forge. The OpenID Connect endpoints
    # authenticate clients (or take PKCE, or an ID token); their one cookie-only action, a logout
    # without an ID token of the browser's current session, only asks, with a form that posts to
    # the pages' CSRF-checked /logout.
    for api in (oauth.bp, v1.bp, v2.bp, admin.bp, wellknown.bp, openapi.bp, oidc.bp):
        csrf.exempt(api)
    csrf.exempt(console.bp)  # the console checks CSRF itself, behind its operators-only gate
    # 404 and 405 come before any blueprint is chosen: answer them by path.
    app.register_error_handler(404, _unrouted)
    app.register_error_handler(405, _unrouted)
    app.after_request(cors.add_cors_headers)


def _unrouted(error: HTTPException) -> Response | tuple[str, int, dict[str, str]]:
    from app.pages import error_page
    from app.web.errors import MACHINE_PREFIXES, http_error

    if request.path.startswith(MACHINE_PREFIXES):
        return http_error(error)
    if request.path.startswith("/admin"):  # the console: no sign of it, to anyone
        return error_page(404)
    return error_page(error.code or 404)
