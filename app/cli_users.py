"""`flask users ...`: find, read and change accounts. Each change is the admin API's and the
console's (app/domain/admin/actions.py), audited with `cli` as the actor."""

from __future__ import annotations

from datetime import datetime

import click
from flask.cli import AppGroup

from app.cli_support import friendly_errors
from app.domain import text
from app.domain.accounts import accounts
from app.domain.admin import actions, directory
from app.domain.admin.pages import DEFAULT_PAGE, MAX_PAGE
from app.domain.audit import ClientInfo
from app.domain.lifecycle import leaving
from app.models import User

users = AppGroup("users", help="Find, read and manage accounts.")
CLI = ClientInfo(actor="cli")  # who acts, in the audit trail
NAME_WIDTH = 30


@users.command("create")
@click.argument("email")
@click.option("--password", help="Prompted for when not given.")
@click.option("--name", "full_name", default="", help="Display name.")
@click.option("--plan", default=None,
              help="Its plan (default: SVC_DEFAULT_PLAN, free unless set); one of SVC_PLANS "
                   "(free, pro, team unless set).")
@friendly_errors
def create_user(email: str, password: str | None, full_name: str, plan: str | None) -> None:
    """Create an account with a password.

    The password is prompted for unless given, and checked against the password policy."""
    if password is None:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    user = accounts.create_user(email, password, full_name, plan)
    click.echo(f"Created {user.email} ({user.id}), plan {user.plan}.")


@users.command("list")
@click.option("--search", "words", default=None,
              help="Only accounts with this text in their address, name or id (any case; "
                   "3 characters or more).")
@click.option("--plan", default=None, help="Only accounts on this plan.")
@click.option("--disabled/--active", "disabled", default=None,
              help="Only disabled accounts, or only active ones (default: both).")
@click.option("--operator", is_flag=True, help="Only accounts that may use the console.")
@click.option("--limit", type=click.IntRange(1, MAX_PAGE), default=DEFAULT_PAGE,
              show_default=True, help="Accounts on one page.")
@click.option("--after", "cursor", default=None,
              help="The cursor the page before printed: the next page, with the same filters.")
@friendly_errors
def list_users(words: str | None, plan: str | None, disabled: bool | None, operator: bool,
               limit: int, cursor: str | None) -> None:
    """List accounts, oldest first, a page at a time.

    Accounts created while you page through never shift a page: the next one starts after
    the last account printed (--after)."""
    status = None if disabled is None else (
        directory.Status.DISABLED if disabled else directory.Status.ACTIVE)
    page = directory.search_users(
        directory.Search(plan=plan, status=status, text=words, operator=operator or None),
        limit, cursor)
    if not page.items:
        click.echo("No account matches.")
        return
    _table(["EMAIL", "NAME", "PLAN", "STATUS", "OPERATOR", "CREATED"],
           [_row(user) for user in page.items])
    if page.next_cursor:
        click.echo(f"More: the same command with --after {page.next_cursor}")


def _row(user: User) -> list[str]:
    return [_safe(user.email, 320), _safe(user.full_name, NAME_WIDTH), user.plan,
            _status(user), "yes" if user.operator else "", _utc(user.created_at)]


def _table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
                   .rstrip())


def _safe(untrusted: str, width: int) -> str:
    """No escape sequence or line break of a name reaches the operator's terminal."""
    return text.cleaned(untrusted, width)


def _status(user: User) -> str:
    if user.erased_at is not None:
        return "erased"
    return directory.status_of(user).value


def _utc(at: datetime | None) -> str:
    return at.strftime("%Y-%m-%d %H:%M UTC") if at else "-"


@users.command("show")
@click.argument("email")
@friendly_errors
def show_user(email: str) -> None:
    """Show one account as support sees it.

    Its plan, status, factors, linked providers and sessions: never a password hash, a key,
    a code or a token."""
    found = directory.profile(directory.require_by_email(email))
    user, factors = found.user, found.second_factors
    confirmed = _since(user.email_verified, user.email_verified_at)
    disabled = _since(user.disabled_at is not None, user.disabled_at)
    for label, value in (
            ("id", user.id), ("email", _safe(user.email, 320)),
            ("name", _safe(user.full_name, 200) or "-"), ("plan", user.plan),
            ("created", _utc(user.created_at)), ("confirmed", confirmed),
            ("disabled", disabled), ("erased after", leaving.erase_after(user)),
            ("operator", "yes" if user.operator else "no"),
            ("providers", ", ".join(found.providers) or "none"),
            ("factors", f"authenticator app {'yes' if factors['totp'] else 'no'}, "
                        f"{found.passkeys} passkeys, "
                        f"{factors['recovery_codes_left']} recovery codes left"),
            ("sessions", f"{found.open_sessions} open, last sign-in "
                         f"{_utc(found.last_sign_in)}")):
        if value is not None:
            click.echo(f"{label:<13} {value}")


def _since(yes: bool, at: datetime | None) -> str:
    return ("yes" + (f", since {_utc(at)}" if at else "")) if yes else "no"


@users.command("set-plan")
@click.argument("email")
@click.argument("plan")
@friendly_errors
def set_plan(email: str, plan: str) -> None:
    """Put an account on a plan.

    PLAN is one of SVC_PLANS (free, pro, team unless set). Sites see it at once through
    verify, and in the tokens of the next refresh."""
    user = directory.require_by_email(email)
    if user.plan == plan:
        click.echo(f"{user.email} is already on plan {plan}.")
        return
    user = actions.update(user, CLI, plan=plan)
    click.echo(f"{user.email} is now on plan {user.plan}.")


@users.command("disable")
@click.argument("email")
@friendly_errors
def disable(email: str) -> None:
    """Disable an account: it signs in no more.

    Its sessions end at once."""
    user = directory.require_by_email(email)
    was_disabled = user.disabled_by_operator
    actions.disable(user, CLI)
    click.echo(f"{user.email} was already disabled; any session left is revoked."
               if was_disabled else f"Disabled {user.email}; its sessions are revoked.")


@users.command("enable")
@click.argument("email")
@friendly_errors
def enable(email: str) -> None:
    """Let a disabled account sign in again.

    Not one its owner is closing: only the link mailed to them restores it."""
    user = directory.require_by_email(email)
    if user.disabled_at is None:
        click.echo(f"{user.email} is not disabled: nothing changed.")
        return
    actions.enable(user, CLI)
    click.echo(f"Enabled {user.email}: it can sign in again.")


@users.command("reset-mfa")
@click.argument("email")
@friendly_errors
def reset_mfa(email: str) -> None:
    """Remove every second factor of an account.

    Its authenticator app, passkeys and recovery codes go; audited, and the owner is told by
    mail."""
    user = actions.clear_second_factors(directory.require_by_email(email), CLI)
    click.echo(f"Removed every second factor of {user.email}.")


@users.command("delete")
@click.argument("email")
@friendly_errors
def delete_user(email: str) -> None:
    """Close an account as its owner would.

    Its sessions end now, and `purge` erases it after SVC_ACCOUNT_DELETION_GRACE_DAYS (the
    owner is mailed a link that restores it until then)."""
    user = actions.delete(directory.require_by_email(email), CLI)
    click.echo(f"Closed {user.email}; it is erased after {leaving.erase_after(user)}.")


@users.command("grant-operator")
@click.argument("email")
@friendly_errors
def grant_operator(email: str) -> None:
    """Let an account use the support console.

    The console is at /admin; the account needs a second factor there."""
    user = actions.set_operator(directory.require_by_email(email), CLI, operator=True)
    click.echo(f"{user.email} is an operator.")


@users.command("revoke-operator")
@click.argument("email")
@friendly_errors
def revoke_operator(email: str) -> None:
    """Take the support console away from an account."""
    user = actions.set_operator(directory.require_by_email(email), CLI, operator=False)
    click.echo(f"{user.email} is no longer an operator.")
