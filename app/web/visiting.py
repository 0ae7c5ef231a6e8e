"""Which site the person on a hosted page came from, to show its name, logo and colour: the
site of the page's handoff target, of the OpenID Connect authorization under way (its consent
page's too), or named by a mailed link (`site`: a family site only). Resolved once a request; a
page with none is the service's own."""

from __future__ import annotations

from urllib.parse import parse_qs

from flask import g, request

from app.domain.clients import sites
from app.domain.clients.sites import Site
from app.domain.errors import AuthError
from app.web import pending_authorization, targets


def visiting_site() -> Site | None:
    if "svc_visiting" not in g:
        g.svc_visiting = _find()
    found: Site | None = g.svc_visiting
    return found


def _find() -> Site | None:
    if request.path.startswith("/oauth2/"):
        # An OpenID Connect request names its client; its redirect_uri is no handoff's target.
        untrusted_client = request.args.get("client_id")
        return sites.registered_site(untrusted_client) if untrusted_client else None
    try:
        target = targets.from_request(required=False)
    except AuthError:  # the page says what is wrong with it; no site to show
        return None
    if target is not None:
        return sites.site_of_redirect_uri(target.redirect_uri)
    untrusted_name = request.args.get("client_id") or request.args.get("site")
    if untrusted_name is not None:
        # A link anyone can write: a family site only (a third party shows on its own
        # authorization's pages, above and below).
        return sites.family_site(untrusted_name)
    if request.path.startswith(("/login", "/signup")):
        pending = pending_authorization.pending()
        if pending is not None:
            untrusted_name = next(iter(parse_qs(pending.query).get("client_id", [])), None)
    return sites.registered_site(untrusted_name) if untrusted_name else None
