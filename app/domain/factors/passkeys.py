"""Passkeys (WebAuthn, on py_webauthn): registering them, signing in with one alone, and one as
the second step. The relying party is SVC_PUBLIC_URL's host and only its origin is accepted, so a
passkey made for another site, or an answer made on another page, is refused.
Why: docs/architecture/design-notes.md, "Passkeys"."""

from __future__ import annotations

import hashlib
import ipaddress
import json
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import webauthn
from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from webauthn.helpers import base64url_to_bytes
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    AuthenticatorTransport,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from app.db.batches import delete_batched
from app.db.rows import changed, claim_once
from app.db.transactions import kept, writes
from app.domain import audit, text
from app.domain.audit import AuditName, ClientInfo
from app.domain.clock import now
from app.domain.errors import NotFound
from app.domain.factors import codes, second_factors
from app.domain.factors.errors import InvalidPasskey, LastSignInMethod, TooManyPasskeys
from app.domain.factors.pending import live_pending
from app.domain.factors.second_factors import Purpose
from app.domain.factors.step_up import step_up
from app.domain.sessions import sessions
from app.extensions import db
from app.infra.settings import settings
from app.models import (
    AuthSession,
    Identity,
    MailJob,
    Passkey,
    PasskeyChallenge,
    PendingSignIn,
    User,
)

CHALLENGE_TTL = 300  # seconds to answer a ceremony: the browser's prompt, a PIN, a security key
MAX_PASSKEYS = 20
MAX_CREDENTIAL_JSON = 64 * 1024  # an answer is a few KiB; a certificate chain at most tens
PROVIDER = "passkey"  # the first factor of a sign-in with a passkey alone
# The second factor a passkey proves, as sessions and tokens record it (amr: hwk or swk).
DEVICE_BOUND, SYNCED = "passkey", "synced_passkey"
_TRANSPORTS = {transport.value for transport in AuthenticatorTransport}
SECOND_STEP_ONLY = ("Since the password was reset, this passkey signs in only after the new "
                    "password: sign in with it, then use the passkey as the second step.")


# The relying party -----------------------------------------------------------------------------

def _rp_id() -> str:
    return urlsplit(settings().public_url).hostname or "localhost"


def _origin() -> str:
    """SVC_PUBLIC_URL's origin as a browser sends it: the host in lower case, no default port
    (`https://auth.example:443` is `https://auth.example` to a browser)."""
    parts = urlsplit(settings().public_url)
    default_port = {"http": 80, "https": 443}.get(parts.scheme)
    port = f":{parts.port}" if parts.port not in (None, default_port) else ""
    return f"{parts.scheme}://{parts.hostname}{port}"


def available() -> bool:
    """Whether browsers can make passkeys for this service: WebAuthn takes a domain name as the
    relying party's id, never an IP address (`make run`'s 127.0.0.1: browse localhost instead)."""
    try:
        ipaddress.ip_address(_rp_id())
    except ValueError:
        return True
    return False


def _user_handle(user_id: str) -> bytes:
    """The opaque handle a passkey keeps for its account: the account's id, nothing personal."""
    return user_id.encode()


# Reading ---------------------------------------------------------------------------------------

def of(user: User) -> list[Passkey]:
    """The account's passkeys, oldest first (the account page lists them)."""
    return list(db.session.scalars(select(Passkey).where(Passkey.user_id == user.id)
                                   .order_by(Passkey.created_at, Passkey.id)))


def _count(user: User) -> int:
    return int(db.session.scalar(select(func.count()).select_from(Passkey)
                                 .where(Passkey.user_id == user.id)) or 0)


def _descriptors(user: User) -> list[PublicKeyCredentialDescriptor]:
    return [PublicKeyCredentialDescriptor(
        id=passkey.credential_id,
        transports=[AuthenticatorTransport(t) for t in passkey.transports.split(",") if t])
        for passkey in of(user)]


def _credential_key(credential_id: bytes) -> str:
    return hashlib.sha256(credential_id).hexdigest()


# Challenges ------------------------------------------------------------------------------------

def _new_challenge(purpose: str, *, user_id: str | None = None,
                   pending_hash: str | None = None) -> bytes:
    raw, at = secrets.token_bytes(32), now()
    db.session.add(PasskeyChallenge(
        challenge_hash=hashlib.sha256(raw).hexdigest(), purpose=purpose, user_id=user_id,
        pending_hash=pending_hash, created_at=at,
        expires_at=at + timedelta(seconds=CHALLENGE_TTL)))
    return raw


@dataclass(frozen=True)
class _Answer:
    """A browser's answer to a ceremony, parsed only as far as finding its challenge."""

    credential: dict[str, Any]
    challenge: bytes
    ceremony: PasskeyChallenge


def _claimed(untrusted_json: str, purpose: str) -> _Answer:
    """The answer, with the challenge it names claimed (once, unexpired, for `purpose`).
    InvalidPasskey for anything else; the signature is checked later, by py_webauthn."""
    try:
        if len(untrusted_json) > MAX_CREDENTIAL_JSON:
            raise ValueError("too long")
        credential = json.loads(untrusted_json)
        client_data = json.loads(base64url_to_bytes(credential["response"]["clientDataJSON"]))
        challenge = base64url_to_bytes(client_data["challenge"])
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        raise InvalidPasskey() from None  # RecursionError: JSON nested thousands deep
    if not isinstance(credential, dict):
        raise InvalidPasskey()
    ceremony = db.session.get(PasskeyChallenge, hashlib.sha256(challenge).hexdigest())
    if ceremony is None or ceremony.purpose != purpose or ceremony.expires_at <= now() \
            or not claim_once(PasskeyChallenge,
                              PasskeyChallenge.challenge_hash == ceremony.challenge_hash,
                              PasskeyChallenge.used_at, used_at=now()):
        raise InvalidPasskey()
    return _Answer(credential, challenge, ceremony)


# Registering -----------------------------------------------------------------------------------

def _may_register(user: User, session: AuthSession) -> None:
    second_factors.require_may_enrol(user)
    step_up(user, session, None)
    if _count(user) >= MAX_PASSKEYS:
        raise TooManyPasskeys()


@writes
def registration_options(user: User, session: AuthSession) -> str:
    """The options for `navigator.credentials.create()`, as JSON: a discoverable credential for
    this account (so it can sign in alone), none of the ones it has already. Like every change to
    how the account signs in: a recent sign-in, and an address someone proved."""
    _may_register(user, session)
    options = webauthn.generate_registration_options(
        rp_id=_rp_id(), rp_name=settings().brand, user_id=_user_handle(user.id),
        user_name=user.email, user_display_name=user.full_name or user.email,
        challenge=_new_challenge(PasskeyChallenge.REGISTER, user_id=user.id),
        timeout=CHALLENGE_TTL * 1000,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED,
            user_verification=UserVerificationRequirement.PREFERRED),
        exclude_credentials=_descriptors(user))
    return webauthn.options_to_json(options)


@dataclass(frozen=True)
class Registered:
    passkey: Passkey
    recovery_codes: list[str] | None  # a new set, when this is the account's first factor


@writes
def register(user: User, session: AuthSession, untrusted_json: str, untrusted_name: str,
             client: ClientInfo) -> Registered:
    """Keep the passkey the browser made for `registration_options`. For an account that had no
    second factor, every other session ends (none of them proved one) and recovery codes are
    made; the owner is told by mail. InvalidPasskey (kept: the challenge is spent) otherwise."""
    answer = _claimed(untrusted_json, PasskeyChallenge.REGISTER)
    if answer.ceremony.user_id != user.id:
        raise kept(InvalidPasskey())
    _may_register(user, session)
    try:
        verified = webauthn.verify_registration_response(
            credential=answer.credential, expected_challenge=answer.challenge,
            expected_rp_id=_rp_id(), expected_origin=_origin())
    except (WebAuthnException, ValueError, KeyError, TypeError):
        raise kept(InvalidPasskey("That passkey could not be added. Try again.")) from None
    key = _credential_key(verified.credential_id)
    if db.session.scalar(select(Passkey.id).where(Passkey.credential_key == key)) is not None:
        raise kept(InvalidPasskey("That passkey is registered already."))
    first_factor = not second_factors.has_second_factor(user)
    name = text.cleaned(untrusted_name, 64) or "Passkey"
    passkey = Passkey(user_id=user.id, credential_key=key, credential_id=verified.credential_id,
                      public_key=verified.credential_public_key,
                      sign_count=verified.sign_count, transports=_transports(answer.credential),
                      name=name, backup_eligible=verified.credential_device_type == "multi_device",
                      backed_up=verified.credential_backed_up, created_at=now())
    db.session.add(passkey)
    try:
        db.session.flush()
    except IntegrityError:  # the same passkey, registered by a request racing this one
        raise InvalidPasskey("That passkey is registered already.") from None
    recovery = None
    if first_factor:
        sessions.revoke_all(user.id, "second_factor_added", except_session=session.id)
        recovery = codes.new_recovery_codes(user)
    audit.record(AuditName.PASSKEY_ADDED, client, user_id=user.id, session_id=session.id)
    second_factors.tell_owner(user, MailJob.SECOND_FACTOR_ADDED, "passkey", name)
    return Registered(passkey, recovery)


def _transports(credential: dict[str, Any]) -> str:
    """The transports the browser reported, those we know of (it is a hint, not checked)."""
    said = credential["response"].get("transports")
    known = [t for t in said if isinstance(t, str) and t in _TRANSPORTS] \
        if isinstance(said, list) else []
    return ",".join(dict.fromkeys(known))  # each once: all of them fit the column


@writes
def remove(user: User, session: AuthSession, passkey_id: str, code: str | None,
           client: ClientInfo) -> Passkey:
    """Remove one of the account's passkeys (step-up). The recovery codes go with the account's
    last second factor. LastSignInMethod for the last one of an account without a password or
    a provider (a passkey-first account): it would have no way in left."""
    passkey = db.session.get(Passkey, passkey_id)
    if passkey is None or passkey.user_id != user.id:
        raise NotFound("No such passkey on this account.")
    if user.password_hash is None and _count(user) <= 1 and db.session.scalar(
            select(Identity.id).where(Identity.user_id == user.id).limit(1)) is None:
        raise LastSignInMethod()
    step_up(user, session, code)
    changed(delete(Passkey).where(Passkey.id == passkey.id))
    second_factors.drop_recovery_codes_if_unprotected(user)
    audit.record(AuditName.PASSKEY_REMOVED, client, user_id=user.id, session_id=session.id)
    second_factors.tell_owner(user, MailJob.SECOND_FACTOR_REMOVED, "passkey",
                               passkey.name)
    return passkey


# Signing in ------------------------------------------------------------------------------------

def _verified(answer: _Answer, *, require_user_verification: bool,
              owner: str | None = None) -> Passkey:
    """The stored passkey whose signature the answer carries (of the account `owner`, when
    given), its counter and flags updated. InvalidPasskey (kept) for an unknown passkey or
    another account's, another account's handle, a bad signature, origin or relying party, a
    counter that went back, or a missing user verification."""
    try:
        credential_id = base64url_to_bytes(answer.credential["rawId"])
    except (ValueError, KeyError, TypeError):
        raise kept(InvalidPasskey()) from None
    passkey = db.session.scalars(select(Passkey).where(
        Passkey.credential_key == _credential_key(credential_id))).one_or_none()
    if passkey is None:
        raise kept(InvalidPasskey("That passkey is not one of this service's (it may have been "
                                  "removed). Sign in another way."))
    if owner is not None and passkey.user_id != owner:
        raise kept(InvalidPasskey())  # nor is another account's touched
    try:
        handle = answer.credential["response"].get("userHandle")
        if handle and base64url_to_bytes(handle) != _user_handle(passkey.user_id):
            raise InvalidPasskey()
        verified = webauthn.verify_authentication_response(
            credential=answer.credential, expected_challenge=answer.challenge,
            expected_rp_id=_rp_id(), expected_origin=_origin(),
            credential_public_key=passkey.public_key,
            credential_current_sign_count=passkey.sign_count,
            require_user_verification=require_user_verification)
    except (WebAuthnException, InvalidPasskey, ValueError, KeyError, TypeError, AttributeError):
        raise kept(InvalidPasskey()) from None
    passkey.sign_count, passkey.backed_up = verified.new_sign_count, verified.credential_backed_up
    passkey.last_used_at = now()
    return passkey


def method_of(passkey: Passkey) -> str:
    return SYNCED if passkey.backup_eligible else DEVICE_BOUND


@writes
def sign_in_options() -> str:
    """The options for `navigator.credentials.get()` on the login page: any of this service's
    passkeys (the browser offers them; autofill too), with the user verified."""
    options = webauthn.generate_authentication_options(
        rp_id=_rp_id(), challenge=_new_challenge(PasskeyChallenge.SIGN_IN),
        timeout=CHALLENGE_TTL * 1000, user_verification=UserVerificationRequirement.REQUIRED)
    return webauthn.options_to_json(options)


@writes
def signer(untrusted_json: str) -> tuple[User, str]:
    """Who signs in with a passkey alone, and the method proved (domain/sign_in.py finishes
    the sign-in): two factors, the key and the person's PIN or fingerprint. InvalidPasskey
    (kept) when the answer does not hold, or the account is disabled."""
    answer = _claimed(untrusted_json, PasskeyChallenge.SIGN_IN)
    passkey = _verified(answer, require_user_verification=True)
    user = db.session.get_one(User, passkey.user_id)
    if user.disabled_at is not None:
        raise kept(InvalidPasskey())
    if not passkey.signs_in_alone:
        raise kept(InvalidPasskey(SECOND_STEP_ONLY))
    return user, method_of(passkey)


@writes
def second_step_options(raw_pending: str, purpose: Purpose) -> str:
    """The options for the second step of a pending sign-in: one of its account's passkeys."""
    pending = live_pending(raw_pending, purpose)
    user = db.session.get_one(User, pending.user_id)
    allowed = _descriptors(user)
    if not allowed:
        raise InvalidPasskey("This account has no passkey. Enter a code instead.")
    options = webauthn.generate_authentication_options(
        rp_id=_rp_id(), allow_credentials=allowed, timeout=CHALLENGE_TTL * 1000,
        challenge=_new_challenge(PasskeyChallenge.SECOND_STEP, user_id=user.id,
                                 pending_hash=pending.token_hash),
        user_verification=UserVerificationRequirement.PREFERRED)
    return webauthn.options_to_json(options)


def second_step(untrusted_json: str, user: User, pending: PendingSignIn) -> str | None:
    """The method a passkey's answer proves for a pending sign-in (factors/pending.py), or
    None: the answer to its own challenge, from one of its account's passkeys."""
    try:
        answer = _claimed(untrusted_json, PasskeyChallenge.SECOND_STEP)
        if answer.ceremony.pending_hash != pending.token_hash:
            return None
        passkey = _verified(answer, require_user_verification=False, owner=user.id)
    except InvalidPasskey:
        return None  # counted like a wrong code; the challenge stays spent
    passkey.signs_in_alone = True  # its holder knows the password in force: see stop_alone
    return method_of(passkey)


def stop_alone(user: User) -> None:
    """After a password reset, in its unit of work: the account's passkeys sign in no more on
    their own, only as the second step after the new password (which gives it back). A reset
    ends every way in that someone who once knew the password may have added (providers,
    sessions); a passkey is one, but it may as well be the owner's second factor, so it stays
    as that."""
    changed(update(Passkey).where(Passkey.user_id == user.id)
                       .values(signs_in_alone=False))


def purge_expired() -> int:
    return delete_batched(PasskeyChallenge.challenge_hash,
                          PasskeyChallenge.expires_at < now() - timedelta(days=1))
