"""The proof asked before an account's address changes or the account goes: its password, or
for an account without one a code of its authenticator app, a recovery code, or an answer of one
of its passkeys (factors/passkey_proof.py: the hosted pages only). On the hosted
pages a sign-in of the last few minutes stands in for either before leaving (which its mailed
link undoes), never before an address change (whose undo link is the owner's way back)."""

from __future__ import annotations

from app.db.transactions import writes
from app.domain.accounts import accounts
from app.domain.accounts.errors import InvalidCredentials
from app.domain.audit import ClientInfo
from app.domain.factors import passkey_proof, step_up
from app.domain.factors.errors import StepUpRequired
from app.domain.limits import throttle
from app.domain.services import services
from app.domain.sessions import sessions
from app.domain.tokens.errors import SessionRevoked
from app.models import AuthSession, User


def check_owner(user: User, session: AuthSession, client: ClientInfo, *,
                password: str | None = None, code: str | None = None,
                passkey_answer: str | None = None, recent_suffices: bool = False) -> None:
    """StepUpRequired without a proof; InvalidCredentials (counted against the account, as a
    wrong current password is), InvalidSecondFactor or InvalidPasskey for a wrong one."""
    if recent_suffices and step_up.recently_signed_in(session):
        return
    if user.password_hash is not None:
        if not password:
            raise StepUpRequired("Send the account's password.")
        attempt = throttle.password_change_attempt(user)
        if not services().hasher.verify(user.password_hash, password).ok:
            accounts.record_failed_login(user, client)
            raise InvalidCredentials("The password is not right.")
        throttle.password_change_succeeded(attempt)
        return
    if passkey_answer:
        _prove_with_passkey(user, passkey_answer)
        return
    _prove_with_code(user, session, code)


def proved_owner(session_id: str, user_id: str, client: ClientInfo, *,
                 password: str | None = None, code: str | None = None,
                 passkey_answer: str | None = None, recent_suffices: bool = False) -> User:
    """The account of a live session, once check_owner is satisfied."""
    session = _live(session_id, user_id)
    check_owner(session.user, session, client, password=password, code=code,
                passkey_answer=passkey_answer, recent_suffices=recent_suffices)
    return session.user


def live_owner(session_id: str, user_id: str) -> User:
    """The account of a live session (no proof: reading its own data)."""
    return _live(session_id, user_id).user


def _live(session_id: str, user_id: str) -> AuthSession:
    session = sessions.own_live_session(session_id, user_id)
    if session is None:
        raise SessionRevoked()
    return session


@writes
def _prove_with_passkey(user: User, passkey_answer: str) -> None:
    passkey_proof.prove(user, passkey_answer)


@writes
def _prove_with_code(user: User, session: AuthSession, code: str | None) -> None:
    step_up.step_up(user, session, code, recent_suffices=False)
