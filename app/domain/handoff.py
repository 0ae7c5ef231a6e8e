"""Handoff codes: how a sign-in on our pages or through a provider reaches a client site.

A code is 256 random bits, stored hashed, valid for 60 s and once. It is bound to the redirect
URI, the provider and (when the client sent one) a PKCE S256 challenge. The first redemption
burns it whatever the outcome; a second one also revokes the session the first one opened,
since whoever holds a copy of a used code is not who it was issued to (RFC 6749 §10.5).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from datetime import timedelta

from sqlalchemy import update

from app.database import writes
from app.domain import audit, sessions, tokens
from app.domain.audit import ClientInfo
from app.domain.clock import now
from app.domain.errors import InvalidCode, InvalidRequest
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


@writes
def issue(user: User, provider: str, redirect_uri: str, code_challenge: str | None) -> str:
    """A code for `user`'s client site; EmailNotConfirmed when the account may not sign in."""
    sessions.require_confirmed(user)
    raw = tokens.new_secret()
    at = now()
    db.session.add(HandoffCode(code_hash=tokens.hash_secret(raw), user_id=user.id,
                               provider=provider, redirect_uri=redirect_uri,
                               code_challenge=code_challenge, created_at=at,
                               expires_at=at + CODE_TTL))
    db.session.commit()
    return raw


@writes
def redeem(raw: str, provider: str, code_verifier: str | None, redirect_uri: str | None,
           client: ClientInfo) -> sessions.IssuedTokens:
    code_hash = tokens.hash_secret(raw)
    at = now()
    claimed = db.session.execute(
        update(HandoffCode)
        .where(HandoffCode.code_hash == code_hash, HandoffCode.redeemed_at.is_(None))
        .values(redeemed_at=at)
        .execution_options(synchronize_session=False)
    ).rowcount
    code = db.session.get(HandoffCode, code_hash)
    if code is None:
        db.session.rollback()
        raise InvalidCode()
    if claimed != 1:
        _revoke_first_redemption(code, client)
        raise InvalidCode()
    if not _matches(code, provider, code_verifier, redirect_uri) or code.expires_at <= at:
        audit.record("handoff_code_refused", client, user_id=code.user_id)
        db.session.commit()  # the code stays burned
        raise InvalidCode()
    user = db.session.get(User, code.user_id)
    if user is None or user.disabled_at is not None:
        db.session.commit()
        raise InvalidCode()
    issued = sessions.sign_in(user, code.provider, client, commit=False)
    code.session_id = issued.session.id
    db.session.commit()
    return issued


def _matches(code: HandoffCode, provider: str, code_verifier: str | None,
             redirect_uri: str | None) -> bool:
    if not hmac.compare_digest(code.provider, provider):
        return False
    if redirect_uri is not None and not hmac.compare_digest(code.redirect_uri, redirect_uri):
        return False
    if code.code_challenge is None:
        return code_verifier is None
    if code_verifier is None or not _VERIFIER.match(code_verifier):
        return False
    computed = base64.urlsafe_b64encode(hashlib.sha256(code_verifier.encode()).digest())
    return hmac.compare_digest(computed.rstrip(b"=").decode(), code.code_challenge)


def _revoke_first_redemption(code: HandoffCode, client: ClientInfo) -> None:
    if code.session_id is not None:
        session = db.session.get(AuthSession, code.session_id)
        if session is not None:
            sessions.revoke(session, "handoff_code_replayed")
    audit.record("handoff_code_replayed", client, user_id=code.user_id,
                 session_id=code.session_id)
    db.session.commit()
