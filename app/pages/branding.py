"""A site's looks on our pages: its logo and accent colour, served from our own origin (the CSP
allows images and style sheets from 'self' only), and the site a page shows (web/visiting.py);
and the service's own front page."""

from __future__ import annotations

from typing import Any

from flask import Response, abort, has_request_context, redirect, render_template, url_for
from werkzeug.wrappers import Response as WerkzeugResponse

from app.domain.clients import sites
from app.pages.blueprint import bp
from app.web import browser
from app.web.visiting import visiting_site

CACHE = "public, max-age=300"


@bp.app_context_processor
def _visiting() -> dict[str, Any]:
    # Mails are rendered by the outbox's thread, outside any request: no site to show there.
    return {"visiting": visiting_site() if has_request_context() else None}


@bp.get("/sites/<name>/logo")
def site_logo(name: str) -> Response:
    found = sites.site_logo(name[:64])
    if found is None:
        abort(404)
    media_type, data = found
    response = Response(data, mimetype=media_type)
    # Never a document of ours: no script, no sniffing, even opened on its own.
    response.headers["Content-Security-Policy"] = ("default-src 'none'; "
                                                   "style-src 'unsafe-inline'; sandbox")
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Cache-Control"] = CACHE
    return response


@bp.get("/sites/<name>/theme.css")
def site_theme(name: str) -> Response:
    site = sites.registered_site(name[:64])
    if site is None or not site.branding.accent_color:
        abort(404)
    # The colour was checked (#rrggbb) when the site was registered: nothing else gets in.
    css = f":root {{ --accent: {site.branding.accent_color}; }}\n"
    return Response(css, mimetype="text/css", headers={"Cache-Control": CACHE})


@bp.get("/")
def home() -> WerkzeugResponse | str:
    """The service's own front page: the account for a signed-in browser, else the way in."""
    if browser.current() is not None:
        return redirect(url_for(".account"))
    return render_template("pages/home.html")
