"""Handoff codes: how a sign-in on our pages or through a provider reaches a client site.

A code is 256 random bits, stored hashed, valid for 60 s and once. It is bound to the redirect
URI (and so to its site, which must still use the handoff when the code is redeemed:
clients/sites.py), the provider and (when the client sent one) a PKCE S256 challenge. The first
redemption burns it whatever the outcome; a second one also revokes the session the first one
opened, since whoever holds a copy of a used code is not who it was issued to (RFC 6749 §10.5).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import timedelta

from app.db.rows import claim_once
from app.db.transactions import kept, writes
from app.domain import audit
from app.domain.audit import AuditName, ClientInfo
from app.domain.clients import sites
from app.domain.clock import now
from app.domain.sessions import sessions
from app.domain.sessions.errors import InvalidCode, InvalidRequest
from app.domain.tokens import tokens
from app.extensions import db
from app.models import AuthSession, HandoffCode, User

CODE_TTL = timedelta(seconds=60)
# RFC 7636 §4.1-4.2: a verifier is 43-128 unreserved characters; an S256 challenge is 43.
_VERIFIER = re.compile(r"^[A-Za-z0-9\-._~]{43,128}$")
_CHALLENGE = re.compile(r"^[A-Za-z0-9\-_]{43}$")


def checked_challenge(untrusted_challenge: str | None, untrusted_method: str | None) -> str | None:
    """The client's PKCE challenge, if it sent a valid S256 one; InvalidRequest if it is bad."""
    if not untrusted_challenge:
        if untrusted_method:
            raise InvalidRequest("code_challenge_method was sent without a code_challenge.")
        return None
    if untrusted_method != "S256":
        raise InvalidRequest("code_challenge_method must be S256.")
    if not _CHALLENGE.match(untrusted_challenge):
        raise InvalidRequest("code_challenge must be 43 base64url characters (S256).")
    return untrusted_challenge


@dataclass(frozen=True)
class HandTo:
    """The client site a sign-in goes back to with a code: its registered redirect URI, the
    PKCE challenge it sent, if any, and its own state, which goes back with the code."""

    redirect_uri: str
    code_challenge: str | None = None
    state: str | None = None


@writes
def issue_code(user: User, provider: str, hand_to: HandTo, *,
               second_factor: str | None = None, browser_session_id: str | None = None) -> str:
    """A code for `user`'s client site; EmailNotConfirmed when the account may not sign in.
    `second_factor`: the one the sign-in proved, if any; `browser_session_id`: the browser
    session of our pages it was issued through, which the site's sign-out may end too."""
    sessions.require_confirmed(user)
    raw = tokens.new_secret()
    at = now()
    db.session.add(HandoffCode(code_hash=tokens.hash_secret(raw), user_id=user.id,
                               provider=provider, redirect_uri=hand_to.redirect_uri,
                               second_factor=second_factor,
                               browser_session_id=browser_session_id,
                               code_challenge=hand_to.code_challenge, created_at=at,
                               expires_at=at + CODE_TTL))
    return raw


@writes
def redeem(raw: str, provider: str, code_verifier: str | None, redirect_uri: str | None,
           client: ClientInfo) -> sessions.IssuedTokens:
    """Trade a code for a session's first tokens; InvalidCode, with the code burned, if it is
    unknown, used, expired or not this client's."""
    code_hash = tokens.hash_secret(raw)
    at = now()
    claimed = claim_once(HandoffCode, HandoffCode.code_hash == code_hash, HandoffCode.redeemed_at,
                         redeemed_at=at)
    code = db.session.get(HandoffCode, code_hash)
    if code is None:
        raise InvalidCode()
    if not claimed:
        revoke_first_redemption(code, client)
        raise kept(InvalidCode())
    if not _matches(code, provider, code_verifier, redirect_uri) or code.expires_at <= at \
            or sites.handoff_site_of(code.redirect_uri) is None:
        audit.record(AuditName.HANDOFF_CODE_REFUSED, client, user_id=code.user_id)
        raise kept(InvalidCode())  # the code stays burned
    user = db.session.get(User, code.user_id)
    if user is None or user.disabled_at is not None:
        raise kept(InvalidCode())
    issued = sessions.issue_tokens(user, code.provider, client,
                                   second_factor=code.second_factor)
    code.session_id = issued.session.id
    site = sites.handoff_site_of(code.redirect_uri)
    issued.session.site = site.name if site else None
    issued.session.browser_session_id = code.browser_session_id
    return issued


def _matches(code: HandoffCode, provider: str, code_verifier: str | None,
             redirect_uri: str | None) -> bool:
    if code.client_id is not None:  # an OpenID Connect client's code: its token endpoint only
        return False
    if not _same(code.provider, provider):
        return False
    if redirect_uri is not None and not _same(code.redirect_uri, redirect_uri):
        return False
    if code.code_challenge is None:
        return code_verifier is None
    if code_verifier is None or not _VERIFIER.match(code_verifier):
        return False
    computed = base64.urlsafe_b64encode(hashlib.sha256(code_verifier.encode()).digest())
    return hmac.compare_digest(computed.rstrip(b"=").decode(), code.code_challenge)


def _same(expected: str, untrusted: str) -> bool:
    """A constant-time comparison of any two texts (compare_digest takes ASCII strings only)."""
    return hmac.compare_digest(expected.encode(), untrusted.encode("utf-8", "surrogatepass"))


def revoke_first_redemption(code: HandoffCode, client: ClientInfo) -> None:
    if code.session_id is not None:
        session = db.session.get(AuthSession, code.session_id)
        if session is not None:
            sessions.revoke(session, "handoff_code_replayed")
    audit.record(AuditName.HANDOFF_CODE_REPLAYED, client, user_id=code.user_id,
                 session_id=code.session_id)
