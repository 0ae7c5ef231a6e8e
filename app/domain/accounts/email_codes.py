"""One-time codes and links mailed to an address: the primitive under signing in by mail and
proving an address (a passkey-first sign-up). Not bound to an account, so an address that has
none yet can prove itself.

API (`purpose` keeps uses apart; EmailCode.SIGN_IN is signing in):

- `issue(email, purpose, browser=None, bound_to=None) -> Issued(code, link)`: a new code
  (8 digits) and link token (256 bits) for the address, in the caller's unit of work; any older
  one of the address and purpose stops working. `browser`: a value only the asking browser
  holds (its cookie), to which the link is bound (`redeem_link`); `bound_to`, its hash
  (`browser_binding`) as a mail job keeps it. The caller mails both.
- `redeem(email, code, purpose) -> bool`: True once for the right code. Each try, right or
  wrong, is counted first, atomically in SQL and committed on its own, and at most
  MAX_ATTEMPTS are compared per issued code: parallel guesses get no more tries. Call it
  outside a unit of work (the count must survive the caller's refusal).
- `look(link, purpose, browser) -> Looked | None`: what a live link shows, changing nothing
  (mail scanners open links): its address, its code, and whether `browser` is the one that asked.
- `redeem_link(link, purpose, browser) -> str | None`: the address key, once, and only in the
  browser that asked.

Stored as hashes: the code keyed under SECRET_KEY and the address (a leaked table gives no
codes), the link as its SHA-256. The code is derived from the link (`code_of`), so the link's
page can show it in another browser, and a mail job's retry mails the same pair. Expiry reads
the injectable clock (domain/clock.py)."""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, select, update

from app.db.rows import add_unless_taken, changed, claim_once
from app.db.transactions import writes
from app.domain import addresses
from app.domain.clock import now
from app.domain.tokens import tokens
from app.extensions import db
from app.infra.settings import settings
from app.models import EmailCode

DIGITS = 8  # 10^8 codes, MAX_ATTEMPTS tries each: 1 in 20 million per code mailed
MAX_ATTEMPTS = 5
TTL = timedelta(minutes=10)
SIGN_IN = EmailCode.SIGN_IN


@dataclass(frozen=True)
class Issued:
    code: str
    link: str  # the link's token, for a URL


@dataclass(frozen=True)
class Looked:
    email_key: str
    code: str
    same_browser: bool


def code_of(link: str) -> str:
    """The code that goes with a link token."""
    digest = tokens.keyed_digest(settings().secret_key, "email code", link)
    return str(int.from_bytes(digest[:8], "big") % 10**DIGITS).zfill(DIGITS)


def _code_hash(email_key: str, code: str) -> str:
    return tokens.keyed_digest(settings().secret_key, "email code hash",
                               f"{email_key}\0{code}").hex()


def browser_binding(browser: str | None) -> str | None:
    """What is kept of the asking browser's value: its hash."""
    return None if not browser else tokens.hash_secret(browser)


def normalise(untrusted_code: str) -> str | None:
    """The digits of a typed code (spaces and hyphens dropped), or None if it cannot be one."""
    code = "".join(untrusted_code.split()).replace("-", "")
    return code if len(code) == DIGITS and code.isascii() and code.isdigit() else None


def issue(email: str, purpose: str, browser: str | None = None, *,
          bound_to: str | None = None) -> Issued:
    """A new code and link for `email` (see the module's doc). `bound_to`: instead of
    `browser`, its hash (`browser_binding`), as a mail job keeps it."""
    key, at, link = addresses.key(email), now(), tokens.new_secret()
    values = {"code_hash": _code_hash(key, code_of(link)), "link_hash": tokens.hash_secret(link),
              "browser_hash": bound_to or browser_binding(browser), "attempts": 0,
              "created_at": at,
              "expires_at": at + TTL, "used_at": None}
    where = (EmailCode.email_key == key, EmailCode.purpose == purpose)
    replace = update(EmailCode).where(*where).values(**values).execution_options(
        synchronize_session=False)
    if not changed(replace) and not add_unless_taken(
            EmailCode(email_key=key, purpose=purpose, **values)):
        changed(replace)  # a concurrent request inserted first: this one replaces it
    return Issued(code_of(link), link)


def is_live(link: str, purpose: str) -> bool:
    """Whether a link token is one of `purpose`'s, unused and unexpired."""
    return _by_link(link, purpose) is not None


def _by_link(link: str, purpose: str) -> EmailCode | None:
    row = db.session.scalars(select(EmailCode).where(
        EmailCode.link_hash == tokens.hash_secret(link), EmailCode.purpose == purpose)).first()
    if row is None or row.used_at is not None or row.expires_at <= now():
        return None
    return row


def redeem(email: str, untrusted_code: str, purpose: str) -> bool:
    """Whether `untrusted_code` is the live code of `email` for `purpose`, using it up if so."""
    code = normalise(untrusted_code)
    return _try(addresses.key(email), code, purpose) if code is not None else False


@writes
def _try(key: str, code: str, purpose: str) -> bool:
    # The UPDATE takes the row's write lock and reads it again under it, so of any number of
    # concurrent tries, only MAX_ATTEMPTS find attempts below the bound; the lock is held to
    # the commit, which the comparison and the claim come before.
    at = now()
    where = (EmailCode.email_key == key, EmailCode.purpose == purpose,
             EmailCode.used_at.is_(None), EmailCode.expires_at > at)
    counted = changed(update(EmailCode).where(*where, EmailCode.attempts < MAX_ATTEMPTS)
                      .values(attempts=EmailCode.attempts + 1)
                      .execution_options(synchronize_session=False))
    if counted != 1:
        return False
    stored = db.session.scalar(select(EmailCode.code_hash).where(*where))
    if stored is None or not hmac.compare_digest(stored, _code_hash(key, code)):
        return False
    return claim_once(EmailCode, (EmailCode.email_key == key) & (EmailCode.purpose == purpose),
                      EmailCode.used_at, used_at=at)


def look(link: str, purpose: str, browser: str | None) -> Looked | None:
    """What the live link `link` shows (see the module's doc); None for a dead one."""
    row = _by_link(link, purpose)
    if row is None:
        return None
    same = row.browser_hash is not None and browser is not None and hmac.compare_digest(
        row.browser_hash, tokens.hash_secret(browser))
    return Looked(row.email_key, code_of(link), same)


@writes
def redeem_link(link: str, purpose: str, browser: str | None) -> str | None:
    """The address key of the live link `link`, using it up, when `browser` asked for it."""
    looked = look(link, purpose, browser)
    if looked is None or not looked.same_browser:
        return None
    claimed = claim_once(EmailCode, (EmailCode.link_hash == tokens.hash_secret(link))
                         & (EmailCode.expires_at > now()), EmailCode.used_at, used_at=now())
    return looked.email_key if claimed else None


def forget(email: str, purpose: str) -> None:
    """Drop the address's code of `purpose`, in the caller's unit of work."""
    db.session.execute(delete(EmailCode).where(EmailCode.email_key == addresses.key(email),
                                               EmailCode.purpose == purpose))
