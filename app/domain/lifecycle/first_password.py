"""A first password for an account that has none (a passkey-first account, or one opened through
a provider): set from a signed-in session with the owner's proof, never by a sign-in alone.
Why: docs/decisions.md, "Passkey-first accounts"."""

from __future__ import annotations

from app.db.transactions import writes
from app.domain import audit
from app.domain.accounts import accounts
from app.domain.audit import AuditName, ClientInfo
from app.domain.errors import AuthError
from app.domain.lifecycle import proof
from app.domain.mail.outbox import schedule
from app.domain.services import services
from app.domain.text import N_
from app.extensions import db
from app.models import MailJob, User


class PasswordAlreadySet(AuthError):
    status = 409
    code = "password_set"
    detail = N_("This account has a password already: change it instead.")


def add_password(session_id: str, user_id: str, new_password: str, client: ClientInfo, *,
                 code: str | None = None, passkey_answer: str | None = None) -> User:
    """Give the account of a live session its first password. The owner's proof is that of
    leaving (lifecycle/proof.py): a sign-in of the last few minutes, a code of a second factor,
    or an answer of one of its passkeys. The password is the address holder's when the address
    is proved (whoever proves the owner holds a way in that only its holder could make). Other
    sessions stay: nothing was taken from the owner. PasswordAlreadySet when it has one."""
    user = proof.live_owner(session_id, user_id)
    if user.password_hash is not None:
        raise PasswordAlreadySet()
    accounts.check_password_policy(new_password, user.email, pointer="#/new_password")
    proof.proved_owner(session_id, user_id, client, code=code, passkey_answer=passkey_answer,
                       recent_suffices=True)
    new_hash = services().hasher.hash(new_password)  # outside the write transaction
    _store(user, new_hash, client, session_id)
    return user


@writes
def _store(user: User, new_hash: str, client: ClientInfo, session_id: str) -> None:
    db.session.refresh(user, with_for_update=True)
    if user.password_hash is not None:  # a concurrent request set one first
        raise PasswordAlreadySet()
    accounts.set_password(user, new_hash, by_address_holder=user.email_verified)
    audit.record(AuditName.PASSWORD_SET, client, user_id=user.id, session_id=session_id)
    schedule(MailJob.PASSWORD_CHANGED, {"to": user.email})
