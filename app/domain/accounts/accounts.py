"""Accounts: registering one, authenticating a password, changing it, and the operator's changes
(plan, disable)."""

from __future__ import annotations

from dataclasses import asdict

from sqlalchemy import delete, select, update

from app.db.rows import add_unless_taken
from app.db.transactions import writes
from app.domain import addresses, audit, events, text
from app.domain.accounts import breached, mailed_links, plans, providers
from app.domain.accounts.errors import EmailTaken, InvalidCredentials
from app.domain.accounts.passwords import check_policy
from app.domain.audit import AuditName, ClientInfo
from app.domain.clock import now
from app.domain.errors import InvalidBody
from app.domain.events import EventType
from app.domain.factors import second_factors, step_up
from app.domain.factors.errors import StepUpRequired
from app.domain.limits import throttle
from app.domain.mail.outbox import schedule
from app.domain.services import services
from app.domain.sessions import sessions
from app.domain.text import N_
from app.extensions import db
from app.infra.settings import settings
from app.models import AuthSession, MailJob, OneTimeToken, User


def find_by_email(untrusted_email: str) -> User | None:
    """The account of exactly this canonical address (app/domain/addresses.py), if any."""
    return db.session.scalars(
        select(User).where(User.email_key == addresses.key(untrusted_email))
    ).one_or_none()


def address_taken(address: str, by_other_than: User | None = None) -> bool:
    """Whether the canonical `address` is another account's: it has it, or a live undo link of
    an address change will give it back to it (held for its seven days, whatever door asks:
    sign-up, a provider's, an operator's, the CLI, another change)."""
    found = find_by_email(address)
    if found is not None and found is not by_other_than:
        return True
    holder = mailed_links.holder_of(address)
    return holder is not None and (by_other_than is None or holder != by_other_than.id)


def prove_address(user: User, *, by_password_holder: bool = False) -> None:
    """Record that whoever acts now has just proved they hold the account's address (a link we
    mailed, or a provider that verified it), in the caller's unit of work. `by_password_holder`:
    they are signed in with the account's password too, so that password is the holder's."""
    user.email_verified, user.email_verified_at = True, now()
    if by_password_holder and user.password_hash is not None:
        user.password_proved_at = user.email_verified_at


def check_password_policy(password: str, email: str, pointer: str = "#/password", *,
                          breach_lookup: bool = True) -> None:
    """The password policy (passwords.py), then, unless `breach_lookup` is False, the breach
    corpus (breached.py: a call to another service, so after every local rule)."""
    config = settings()
    check_policy(password, email=email, brand=config.brand, pointer=pointer,
                 min_length=config.password_min_length,
                 max_length=config.password_max_length)
    if breach_lookup:
        breached.check(password, pointer)


def create_user(untrusted_email: str, password: str | None, full_name: str = "",
                plan: str | None = None, *, language: str | None = None) -> User:
    """A new user, in the current unit of work or its own, on `plan` (checked: plans.py) or
    the default plan; EmailTaken when the address has an account. `language`: the one the
    person signed up in (the web layer's choice), which its mails use from the first on."""
    plan = plans.default() if plan is None else plans.check(plan)
    email, password_hash = prepare(untrusted_email, password)
    return _insert_user(email, password_hash, full_name, plan, language)


def prepare(untrusted_email: str, password: str | None) -> tuple[str, str | None]:
    """The canonical address and the password's hash, checked against the policy.

    The password is hashed before the write transaction begins: on SQLite that transaction
    holds the database's one write lock, which no one should wait for while argon2 runs.
    """
    email = addresses.canonical(untrusted_email)
    if password is None:
        return email, None
    check_password_policy(password, email)
    if address_taken(email):  # answer at once, without hashing for nothing
        raise EmailTaken()
    return email, services().hasher.hash(password)


@writes
def _insert_user(email: str, password_hash: str | None, full_name: str, plan: str,
                 language: str | None = None) -> User:
    if address_taken(email):
        raise EmailTaken()
    at = now()
    user = User(email=email, email_key=email, full_name=full_name.strip(), plan=plan,
                created_at=at, password_changed_at=at if password_hash else None,
                password_hash=password_hash, language=language)
    if not add_unless_taken(user):  # the same address, signed up by a concurrent request
        raise EmailTaken()
    events.emit(EventType.USER_CREATED, user.id, {"email": email, "full_name": user.full_name,
                                                   "plan": plan})
    return user


@writes
def register(email: str, password_hash: str | None, full_name: str, client: ClientInfo, *,
             language: str | None = None) -> User:
    """Register an account (`prepare` made its address and hash): the account (in `language`,
    as create_user) and the promise of its confirmation mail (the mail job makes the link when
    it runs: accounts/recovery.py). domain/sign_in.py opens its sign-in in the same unit of
    work."""
    user = _insert_user(email, password_hash, full_name, plans.default(), language)
    audit.record(AuditName.SIGNED_UP, client, user_id=user.id)
    schedule(MailJob.CONFIRM_EMAIL, {"user_id": user.id, "client": asdict(client)})
    return user


def authenticate(untrusted_email: str, password: str, client: ClientInfo,
                 device: throttle.Device = throttle.API_DEVICE) -> User:
    """Authenticate a password: the user these credentials belong to, or InvalidCredentials.
    The attempt is counted before the hashing, and a success taken back after, in units of work
    of their own (throttle.py), kept whatever follows.

    Unknown email, wrong password, an account with no password and a disabled account all do
    the same hashing work and raise the same error. Before any hashing, RateLimited when the
    email has failed too often from where this attempt comes (domain/limits/throttle.py).
    """
    user = second_factors.find_with_factors(User.email_key == addresses.key(untrusted_email))
    attempt = throttle.login_attempt(addresses.key(untrusted_email), user, client, device)
    # The hashing runs in a read transaction, which holds no lock on any database.
    result = services().hasher.verify(user.password_hash if user else None, password)
    if user is None or not result.ok or user.disabled_at is not None:
        record_failed_login(user, client)  # (counted by login_attempt already)
        raise InvalidCredentials()
    throttle.login_succeeded(attempt)
    if result.needs_rehash:
        _store_hash(user, services().hasher.hash(password))
    return user


@writes
def record_failed_login(user: User | None, client: ClientInfo) -> None:
    """Audit a wrong password (the limits counted it before it was hashed)."""
    audit.record(AuditName.LOGIN_FAILED, client, user_id=user.id if user else None)


@writes
def _store_hash(user: User, password_hash: str) -> None:
    user.password_hash = password_hash


@writes
def set_password(user: User, password_hash: str | None, *,
                 by_address_holder: bool | None = None) -> None:
    """Every change of password goes through here (None removes it): outstanding reset links
    die with it. The caller's unit of work decides which sessions end. `by_address_holder`:
    True, set by someone who just proved the address (a reset link to it); False, by someone
    who may not hold it (a reset link to an address the account has since left); None, a
    change, as much the holder's as the old password was (it proves only the old one)."""
    user.password_hash, user.password_changed_at = password_hash, now()
    if by_address_holder is not None:
        user.password_proved_at = user.password_changed_at if by_address_holder else None
    db.session.execute(delete(OneTimeToken).where(
        OneTimeToken.user_id == user.id, OneTimeToken.purpose == OneTimeToken.RESET_PASSWORD))


def change_password(user: User, current_password: str, new_password: str, client: ClientInfo,
                    *, keep_session: str, code: str | None = None) -> None:
    """Change a password with the current one: every other session ends, and the owner is
    told by mail. InvalidCredentials when the current password is wrong; RateLimited, before
    any hashing, after too many wrong ones on this account. For an account with a second
    factor, step-up too (factors/step_up.py): a recent sign-in or a fresh `code`
    (without one, the current password is itself the fresh proof)."""
    session = db.session.get(AuthSession, keep_session)
    assert session is not None
    if (second_factors.has_second_factor(user) and not code
            and not step_up.recently_signed_in(session)):
        raise StepUpRequired()
    attempt = throttle.password_change_attempt(user)
    if not services().hasher.verify(user.password_hash, current_password).ok:
        record_failed_login(user, client)
        raise InvalidCredentials("The current password is not right.")
    throttle.password_change_succeeded(attempt)
    check_password_policy(new_password, user.email, pointer="#/new_password")
    _apply_password_change(user, services().hasher.hash(new_password), client, session, code)


@writes
def _apply_password_change(user: User, password_hash: str, client: ClientInfo,
                           session: AuthSession, code: str | None) -> None:
    if second_factors.has_second_factor(user):
        step_up.step_up(user, session, code)
    keep_session = session.id
    set_password(user, password_hash)
    sessions.revoke_all(user.id, "password_changed", except_session=keep_session)
    audit.record(AuditName.PASSWORD_CHANGED, client, user_id=user.id, session_id=keep_session)
    schedule(MailJob.PASSWORD_CHANGED, {"to": user.email})



@writes
def set_language(user_id: str, language: str | None) -> None:
    """The language the account's pages and mails use when nothing else asks for one."""
    db.session.execute(update(User).where(User.id == user_id).values(language=language))


def check_name(untrusted_name: str) -> str:
    """A name as the account keeps it (trimmed), or InvalidBody pointing at `full_name`: the
    same rule as the API's and the forms' (at most MAX_NAME_LENGTH characters, none unsafe)."""
    name = untrusted_name.strip()
    if len(name) > providers.MAX_NAME_LENGTH or not text.is_printable(name):
        raise InvalidBody(errors=[{"pointer": "#/full_name", "detail": N_(
            "A name has at most %(count)s characters, none of them control or formatting "
            "characters.", count=providers.MAX_NAME_LENGTH)}])
    return name


def rename(user: User, untrusted_name: str, by: ClientInfo) -> dict[str, str]:
    """Change the account's name in the open unit of work, audited with who did it: the
    changes to announce (announce_changes), none when the name was already this one."""
    name = check_name(untrusted_name)
    if name == user.full_name:
        return {}
    was, user.full_name = user.full_name, name
    audit.record(AuditName.PROFILE_CHANGED, by, user_id=user.id,
                 changes=audit.changed(full_name=(was, name)))
    return {"full_name": name}


def announce_changes(user_id: str, changes: dict[str, str]) -> None:
    """Once the unit of work commits: every instance reads the account again (its next bearer
    call answers the new values), and the sites receive `user.updated` with what changed."""
    if changes:
        sessions.note_account_changed(user_id)
        events.emit(EventType.USER_UPDATED, user_id, {"changed": sorted(changes), **changes})


@writes
def change_own_name(user: User, untrusted_name: str, client: ClientInfo) -> None:
    """The person changes their own name (the account page): an account event like an
    operator's change."""
    announce_changes(user.id, rename(user, untrusted_name, client))
