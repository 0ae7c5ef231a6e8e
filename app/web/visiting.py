"""Which site the person on a hosted page came from, to show its name, logo and colour: the
site of the page's handoff target, of the OpenID Connect authorization under way, or named by a
mailed link (`site`: a family site only). Resolved once a request; a page with none is the
service's own."""

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
    try:
        target = targets.from_request(required=False)
    except AuthError:  # the page says what is wrong with it; no site to show
        return None
    if target is not None:
        return sites.site_of_redirect_uri(target.redirect_uri)
    untrusted_name = request.args.get("client_id") or request.args.get("site")
    if untrusted_name is not None:
        # Any client in its authorization's own pages; elsewhere, a link anyone can write.
        return (sites.registered_site(untrusted_name) if request.path.startswith("/oauth2/")
                else sites.family_site(untrusted_name))
    if request.path.startswith(("/login", "/signup")):
        pending = pending_authorization.pending()
        if pending is not None:
            untrusted_name = next(iter(parse_qs(pending.query).get("client_id", [])), None)
    return sites.registered_site(untrusted_name) if untrusted_name else None
