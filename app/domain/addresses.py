"""What "the same email address" means: one canonical form, for storage, lookup, uniqueness,
rate-limit keys and linking. Deliberately not `str.casefold()`: `ß` is not `ss`, so two people's
addresses never become one account.
Why: docs/architecture/design-notes.md, "Addresses"."""

from __future__ import annotations

from email_validator import EmailNotValidError, validate_email

from app.domain import text
from app.domain.errors import InvalidBody

MAX_LENGTH = 254
_ASCII_UPPER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def canonical(untrusted_email: str, pointer: str = "#/email") -> str:
    """The address in its canonical form; InvalidBody if it is not a valid address."""
    def refuse(detail: str) -> InvalidBody:
        return InvalidBody(errors=[{"pointer": pointer, "detail": detail}])

    if not text.is_printable(untrusted_email):
        raise refuse(text.N_("The email address holds control or formatting characters."))
    try:
        checked = validate_email(untrusted_email.strip(), check_deliverability=False)
    except EmailNotValidError as error:
        raise refuse(str(error)) from None
    address = f"{checked.local_part.translate(_ASCII_UPPER)}@{checked.ascii_domain.lower()}"
    if len(address) > MAX_LENGTH:
        raise refuse(text.N_("The email address is too long."))
    return address


MALFORMED = text.N_("Enter an email address, such as ada@example.com.")


def require_well_formed(untrusted_email: str, pointer: str = "#/email") -> str:
    """The address as given, if it is one; InvalidBody otherwise, with one detail for every
    malformed address: where an answer must reveal nothing about accounts (forgot-password,
    resend-confirmation), it says nothing about the address either, beyond its form."""
    try:
        canonical(untrusted_email, pointer)
    except InvalidBody:
        raise InvalidBody(MALFORMED, [{"pointer": pointer, "detail": MALFORMED}]) from None
    return untrusted_email


def key(untrusted_email: str) -> str:
    """The canonical form for lookups and counter keys, for any string at all: one that is no
    valid address gets a stand-in that no stored address can equal (stored ones are canonical,
    and a string equal to a canonical address would have been valid)."""
    try:
        return canonical(untrusted_email)
    except InvalidBody:
        return untrusted_email.strip().translate(_ASCII_UPPER)[:320]
