"""Accounts seen through Google and GitHub: find, link, create, list and unlink identities.
Who may attach a provider to an account is the whole of account takeover, so every rule is here.
Why: docs/architecture/design-notes.md, "Provider identities and linking"."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, select

from app.db.rows import add_unless_taken
from app.db.transactions import kept, writes
from app.domain import addresses, audit
from app.domain.accounts import accounts
from app.domain.accounts.errors import (
    AccountEmailNotVerified,
    AccountExists,
    AccountNeedsProof,
    EmailTaken,
    IdentityInUse,
    InvalidCredentials,
    LinkNeedsRecentSignIn,
    ProviderEmailNotVerified,
    ProviderSignInRefused,
    TakeOverNeedsSecondFactor,
)
from app.domain.accounts.providers import Profile
from app.domain.audit import AuditName, ClientInfo
from app.domain.clock import now
from app.domain.errors import NotFound
from app.domain.factors import second_factors, step_up
from app.domain.factors.errors import LastSignInMethod
from app.domain.limits import throttle
from app.domain.mail.outbox import schedule
from app.domain.services import services
from app.domain.sessions import sessions
from app.extensions import db
from app.models import AuthSession, Identity, MailJob, User


@writes
def account_for(profile: Profile, client: ClientInfo, language: str | None = None) -> User:
    """The account a provider's identity signs in to, registered (in `language`) or linked
    here if allowed (domain/sign_in.py finishes the sign-in). AccountNeedsProof when the
    matching account must first be proved or taken over."""
    identity = _find(profile)
    if identity is not None:
        user = db.session.get(User, identity.user_id)
        assert user is not None
        _refuse_if_disabled(user, client)
        identity.email = profile.email
        return user
    if not profile.email or not profile.email_verified:
        raise ProviderEmailNotVerified()
    user = accounts.find_by_email(profile.email)
    if user is None:
        try:
            user = accounts.create_user(profile.email, None, profile.name, language=language)
        except EmailTaken:  # held for an undo link (lifecycle/address_change.py), or a race
            raise AccountExists() from None
        accounts.prove_address(user)
        audit.record(AuditName.SIGNED_UP, client, user_id=user.id)
        _link(user, profile, client)
        return user
    _refuse_if_disabled(user, client)
    if not links_automatically(user):
        audit.record(AuditName.PROVIDER_LINK_NEEDS_PROOF, client, user_id=user.id)
        raise kept(AccountNeedsProof(user.id))
    if not user.email_verified:
        accounts.prove_address(user)  # the provider verified it, and it is the account's
    _link(user, profile, client)
    _tell_owner(MailJob.PROVIDER_LINKED, user, profile.provider)
    return user


def links_automatically(user: User) -> bool:
    """Whether a provider that verified this account's address may be linked to it unasked:
    only when no one but the address's holder can know its password."""
    return user.password_is_the_holders


def check_password(user_id: str, profile: Profile, password: str, client: ClientInfo,
                   device: throttle.Device) -> None:
    """Prove the account an AccountNeedsProof named by its password, before `link_proved`:
    InvalidCredentials if it is wrong. A guess like any sign-in: the same
    limits and counters (RateLimited)."""
    user = _account_to_prove(user_id, profile)
    attempt = throttle.login_attempt(user.email_key, user, client, device)
    if not services().hasher.verify(user.password_hash, password).ok:
        accounts.record_failed_login(user, client)
        raise InvalidCredentials("The password is not right.")
    throttle.login_succeeded(attempt)


def check_take_over(user_id: str, profile: Profile) -> None:
    """Whether an AccountNeedsProof may be finished without the password (`link_proved`):
    the provider proved the address, which is as much as a reset link proves, so it does what
    a reset does: the password is removed, every session ends and every other provider is
    unlinked. TakeOverNeedsSecondFactor when the account has a second factor: the provider
    alone does not prove that."""
    user = _account_to_prove(user_id, profile)
    if second_factors.has_second_factor(user):
        raise TakeOverNeedsSecondFactor()


def _account_to_prove(user_id: str, profile: Profile) -> User:
    """The account an AccountNeedsProof named, if it still matches the profile."""
    user = db.session.get(User, user_id)
    if (user is None or user.disabled_at is not None or not profile.email
            or not profile.email_verified or addresses.key(profile.email) != user.email_key):
        raise ProviderSignInRefused()
    return user


@writes
def link_proved(user_id: str, profile: Profile, client: ClientInfo, *, take_over: bool) -> User:
    """Link the provider to the account an AccountNeedsProof named, once proved (by
    `check_password`, or taking it over: `check_take_over`)."""
    user = db.session.get(User, user_id)
    assert user is not None
    identity = _find(profile)
    if identity is not None and identity.user_id != user.id:
        raise IdentityInUse()
    if take_over:
        accounts.set_password(user, None)
        unlink_all(user.id, client)
        identity = None
        sessions.revoke_all(user.id, "provider_took_over")
        audit.record(AuditName.PROVIDER_TOOK_OVER, client, user_id=user.id)
    # The provider proved the address; whoever proved the password too holds both.
    accounts.prove_address(user, by_password_holder=not take_over)
    if identity is None:
        _link(user, profile, client)
    _tell_owner(MailJob.PROVIDER_LINKED, user, profile.provider, took_over=take_over)
    return user


def _find(profile: Profile) -> Identity | None:
    return db.session.scalars(select(Identity).where(
        Identity.provider == profile.provider, Identity.subject == profile.subject)).one_or_none()


def _refuse_if_disabled(user: User, client: ClientInfo) -> None:
    if user.disabled_at is not None:
        audit.record(AuditName.LOGIN_FAILED, client, user_id=user.id)
        raise kept(ProviderSignInRefused())


def _link(user: User, profile: Profile, client: ClientInfo) -> None:
    identity = Identity(user_id=user.id, provider=profile.provider, subject=profile.subject,
                        email=profile.email, created_at=now())
    if not add_unless_taken(identity):  # the same identity, linked by a concurrent callback
        raise ProviderSignInRefused()
    audit.record(AuditName.provider_linked(profile.provider), client, user_id=user.id)


def _tell_owner(kind: str, user: User, provider: str, **fields: bool) -> None:
    """Promise the owner a notice, in the transaction of the change it reports."""
    schedule(kind, {"to": user.email, "provider": provider, **fields})


@writes
def link(user: User, session: AuthSession, profile: Profile, client: ClientInfo) -> None:
    """Link an identity to the account signed in as `session`, which asked for it, whatever its
    email: the person proved both sides in one browser. `check_may_link`'s rules hold here too,
    when the provider comes back, not only when the link started. An identity already linked
    elsewhere stays there."""
    check_may_link(user, session)
    existing = _find(profile)
    if existing is not None:
        if existing.user_id != user.id:
            raise IdentityInUse()
        return
    _link(user, profile, client)
    _tell_owner(MailJob.PROVIDER_LINKED, user, profile.provider)


def check_may_link(user: User, session: AuthSession) -> None:
    """Only an account whose address is verified may link a provider (AccountEmailNotVerified):
    an unconfirmed one may belong to someone who signed up with another person's address. And
    only a recent sign-in (LinkNeedsRecentSignIn), the window of adding a second factor
    (step_up.recently_signed_in)."""
    if not user.email_verified:
        raise AccountEmailNotVerified()
    if not step_up.recently_signed_in(session):
        raise LinkNeedsRecentSignIn()


def providers_of(user_id: str) -> list[str]:
    return sorted(db.session.scalars(
        select(Identity.provider).where(Identity.user_id == user_id)).all())


@writes
def unlink(user_id: str, provider: str, client: ClientInfo) -> None:
    """Remove a linked provider, unless it is the account's last way to sign in."""
    user = db.session.get(User, user_id)
    if user is None:
        raise NotFound()
    identity = db.session.scalars(select(Identity).where(
        Identity.user_id == user.id, Identity.provider == provider)).first()
    if identity is None:
        raise NotFound(f"{provider} is not linked to this account.")
    if user.password_hash is None and len(providers_of(user.id)) <= 1 \
            and not second_factors.has_passkey(user):  # a passkey-first account's passkey
        raise LastSignInMethod()
    db.session.delete(identity)
    audit.record(AuditName.provider_unlinked(provider), client, user_id=user.id)
    _tell_owner(MailJob.PROVIDER_UNLINKED, user, provider)


@writes
def unlink_all(user_id: str, client: ClientInfo, since: datetime | None = None) -> list[str]:
    """Unlink every provider of an account (a reset, a takeover), or those linked at or after
    `since` (an undone address change), in the caller's unit of work, which tells the owner.
    The providers that were unlinked, by name."""
    which = [Identity.user_id == user_id,
             *([Identity.created_at >= since] if since is not None else [])]
    unlinked = sorted(db.session.scalars(select(Identity.provider).where(*which)).all())
    db.session.execute(delete(Identity).where(*which))
    for provider in unlinked:
        audit.record(AuditName.provider_unlinked(provider), client, user_id=user_id)
    return unlinked
