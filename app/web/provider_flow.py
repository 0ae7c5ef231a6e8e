"""Provider sign-in (Google, GitHub) as both surfaces use it: sending the browser to the provider,
and finishing or refusing the sign-in once it comes back, in each mode (domain rules:
app/domain/accounts/identities.py; the routes: app/oauth/ and app/pages/).

- api: a client site started it through the API: the site gets a code, no session here.
- hosted: our login page started it: this browser is signed in too (single sign-on).
- link: the account page started it: the identity is linked to the signed-in account.
"""

from __future__ import annotations

import time

from flask import current_app, redirect, url_for
from werkzeug.wrappers import Response

from app.domain import sign_in
from app.domain.accounts import identities, providers
from app.domain.accounts.errors import AccountNeedsProof, InvalidState, ProviderSignInRefused
from app.domain.accounts.providers import Profile
from app.domain.sign_in import HereSignIn, SiteSignIn
from app.infra.settings import settings
from app.web import browser, locale, provider_state
from app.web.client import client_info
from app.web.provider_state import Mode, PendingLink, ProviderRound
from app.web.targets import Target, send_back


def start(provider: str, mode: Mode, target: Target | None, user_id: str | None = None) -> Response:
    """Send the browser to the provider, remembering in this browser how to finish."""
    authorization = providers.authorization(provider, callback_url(provider))
    provider_state.save(authorization.state, ProviderRound(
        provider=provider, mode=mode, redirect_uri=target.redirect_uri if target else None,
        client_state=target.state if target else None,
        code_challenge=target.code_challenge if target else None,
        code_verifier=authorization.code_verifier, nonce=authorization.nonce,
        started_at=time.time(), user_id=user_id))
    return redirect(authorization.url)


def callback_url(provider: str) -> str:
    return f"{settings().public_url}/api/v2/auth/{provider}/callback"


def sign_in_for(mode: Mode, target: Target | None) -> HereSignIn | SiteSignIn:
    """Where a provider sign-in of `mode` goes: a code for the client site, or this browser
    signed in."""
    if mode == "api":
        assert target is not None
        return browser.for_site(target)
    return browser.here(target)


def finish(pending: ProviderRound, profile: Profile) -> Response:
    """The provider came back with a verified profile: sign in (or link) as the mode says."""
    if pending.mode == "link":
        return _link_to_signed_in(pending, profile)
    try:
        outcome = sign_in.with_provider(profile, sign_in_for(pending.mode, pending.target),
                                        language=locale.select())
    except AccountNeedsProof as needed:  # the hosted pages ask for the password first
        provider_state.save_link(pending, profile, needed.user_id)
        return redirect(url_for("pages.link_account_form"))
    return browser.answer(outcome, pending.target)


def _link_to_signed_in(pending: ProviderRound, profile: Profile) -> Response:
    signed_in = browser.current()
    if signed_in is None or signed_in.user.id != pending.user_id:
        raise InvalidState()
    identities.link(signed_in.user, signed_in.auth_session, profile, client_info())
    return redirect(url_for("pages.account", linked=profile.provider))


def refuse(pending: ProviderRound | PendingLink, refused: ProviderSignInRefused) -> Response:
    """Where a refused provider sign-in goes: the site's callback, the login or account page."""
    current_app.logger.info("provider sign-in refused: %s", refused.code)
    target = pending.target
    if pending.mode == "api":
        assert target is not None
        return send_back(target, error=refused.code)
    if pending.mode == "hosted":
        return redirect(url_for("pages.login_form", error=refused.code,
                                **(target.query() if target else {})))
    return redirect(url_for("pages.account", error=refused.code))
