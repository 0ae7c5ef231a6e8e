"""Accounts seen through Google and GitHub: find, link, create, list and unlink identities."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from app.database import writes
from app.domain import accounts, audit
from app.domain.audit import ClientInfo
from app.domain.clock import now
from app.domain.errors import (
    AccountExists,
    IdentityInUse,
    LastSignInMethod,
    NotFound,
    ProviderEmailNotVerified,
    ProviderSignInRefused,
)
from app.domain.providers import Profile
from app.extensions import db
from app.models import Identity, User


@writes
def user_for(profile: Profile, client: ClientInfo) -> User:
    """The account this provider identity signs in to, creating or linking one if allowed.

    An identity is found by (provider, subject) only. An email match links the identity to an
    existing account only when both the provider and we have verified that email: otherwise
    whoever controls an unverified address could take over, or pre-register, a victim's account.
    A new account is made only from a verified email, for the same reason.
    """
    identity = db.session.scalars(select(Identity).where(
        Identity.provider == profile.provider, Identity.subject == profile.subject)).one_or_none()
    if identity is not None:
        user = db.session.get(User, identity.user_id)
        assert user is not None
        _refuse_if_disabled(user, client)
        identity.email = profile.email
        return user
    if not profile.email or not profile.email_verified:
        raise ProviderEmailNotVerified()
    user = accounts.find_by_email(profile.email)
    if user is not None:
        if not user.email_verified:
            audit.record("provider_link_refused", client, user_id=user.id)
            db.session.commit()
            raise AccountExists()
        _refuse_if_disabled(user, client)
    else:
        user = accounts.create_user(profile.email, None, profile.name[:200])
        user.email_verified = True
        audit.record("signed_up", client, user_id=user.id)
    _link(user, profile, client)
    return user


def _refuse_if_disabled(user: User, client: ClientInfo) -> None:
    if user.disabled_at is not None:
        audit.record("login_failed", client, user_id=user.id)
        db.session.commit()
        raise ProviderSignInRefused()


def _link(user: User, profile: Profile, client: ClientInfo) -> None:
    db.session.add(Identity(user_id=user.id, provider=profile.provider, subject=profile.subject,
                            email=profile.email, created_at=now()))
    try:
        db.session.flush()
    except IntegrityError:  # the same identity, linked by a concurrent callback
        db.session.rollback()
        raise ProviderSignInRefused() from None
    audit.record(f"provider_linked_{profile.provider}", client, user_id=user.id)


@writes
def link(user: User, profile: Profile, client: ClientInfo) -> None:
    """Link an identity to the signed-in account that asked for it, whatever its email: the
    person proved both sides in one browser. An identity already linked elsewhere stays there."""
    existing = db.session.scalars(select(Identity).where(
        Identity.provider == profile.provider, Identity.subject == profile.subject)).one_or_none()
    if existing is not None:
        if existing.user_id != user.id:
            raise IdentityInUse()
        return
    _link(user, profile, client)
    db.session.commit()


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
    if user.password_hash is None and len(providers_of(user.id)) <= 1:
        raise LastSignInMethod()
    db.session.delete(identity)
    audit.record(f"provider_unlinked_{provider}", client, user_id=user.id)
    db.session.commit()
