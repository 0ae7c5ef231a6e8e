"""Operator commands: `flask --app wsgi users|keys|sessions|sites|outbox|events ...` and
`purge`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import click
from flask import Flask, current_app
from flask.cli import AppGroup, with_appcontext

from app.cli_sites import sites_cli
from app.cli_support import friendly_errors
from app.domain import audit, deliveries, retention
from app.domain.accounts import accounts
from app.domain.admin import actions, directory
from app.domain.audit import ClientInfo
from app.domain.clients import service_clients
from app.domain.factors import pending
from app.domain.lifecycle import leaving
from app.domain.limits import throttle
from app.domain.mail import outbox_ops
from app.domain.sessions import sessions
from app.domain.tools import tools
from app.infra.keys import Keyring, SigningKey
from app.models import Delivery

users = AppGroup("users", help="Manage accounts.")
keys = AppGroup("keys", help="Manage the access-token signing keys.")
sessions_cli = AppGroup("sessions", help="Manage sign-in sessions.")
outbox_cli = AppGroup("outbox", help="See and manage the mail the service has promised.")
clients_cli = AppGroup("clients", help="Manage the service clients of the admin API.")
events_cli = AppGroup("events", help="See and retry the deliveries of events to client sites.")


@users.command("create")
@click.argument("email")
@click.option("--password", help="Prompted for when not given.")
@click.option("--name", "full_name", default="", help="Display name.")
@click.option("--plan", default="free", show_default=True)
@friendly_errors
def create_user(email: str, password: str | None, full_name: str, plan: str) -> None:
    if password is None:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    user = accounts.create_user(email, password, full_name, plan)
    click.echo(f"Created {user.email} ({user.id}), plan {user.plan}.")


CLI = ClientInfo(actor="cli")  # who acts, in the audit trail


@users.command("set-plan")
@click.argument("email")
@click.argument("plan")
@friendly_errors
def set_plan(email: str, plan: str) -> None:
    """Put an account on a plan (sites see it at once through verify)."""
    user = actions.update(directory.require_by_email(email), CLI, plan=plan)
    click.echo(f"{user.email} is now on plan {user.plan}.")


@users.command("disable")
@click.argument("email")
@friendly_errors
def disable(email: str) -> None:
    """Stop an account from signing in; its sessions end at once."""
    user = actions.disable(directory.require_by_email(email), CLI)
    click.echo(f"Disabled {user.email}; its sessions are revoked.")


@users.command("enable")
@click.argument("email")
@friendly_errors
def enable(email: str) -> None:
    """Let a disabled account sign in again."""
    user = actions.enable(directory.require_by_email(email), CLI)
    click.echo(f"Enabled {user.email}.")


@users.command("reset-mfa")
@click.argument("email")
@friendly_errors
def reset_mfa(email: str) -> None:
    """Remove every second factor of an account (audited; the owner is told by mail)."""
    user = actions.clear_second_factors(directory.require_by_email(email), CLI)
    click.echo(f"Removed every second factor of {user.email}.")


@users.command("delete")
@click.argument("email")
@friendly_errors
def delete_user(email: str) -> None:
    """Close an account as its owner would: its sessions end now, and `purge` erases it after
    SVC_ACCOUNT_DELETION_GRACE_DAYS (the owner is mailed a link that restores it until then)."""
    user = actions.delete(directory.require_by_email(email), CLI)
    click.echo(f"Closed {user.email}; it is erased after {leaving.erase_after(user)}.")


@users.command("grant-operator")
@click.argument("email")
@friendly_errors
def grant_operator(email: str) -> None:
    """Let an account use the support console (/admin); it needs a second factor there."""
    user = actions.set_operator(directory.require_by_email(email), CLI, operator=True)
    click.echo(f"{user.email} is an operator.")


@users.command("revoke-operator")
@click.argument("email")
@friendly_errors
def revoke_operator(email: str) -> None:
    """Take the support console away from an account."""
    user = actions.set_operator(directory.require_by_email(email), CLI, operator=False)
    click.echo(f"{user.email} is no longer an operator.")


def _keyring() -> Keyring:
    return tools().access_tokens.keyring


@keys.command("rotate")
def rotate() -> None:
    try:
        key = _keyring().rotate()
    except RuntimeError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"New signing key {key.kid} ({key.alg}); older keys verify the tokens they signed"
               " before now, until those expire.")


# A kid is base64url, so one in 64 starts with "-": read it as the argument, not an option.
@keys.command("revoke", context_settings={"ignore_unknown_options": True})
@click.argument("kid")
def revoke_key(kid: str) -> None:
    """Remove a (leaked) key at once: no token it signed verifies any more. Revoking the
    signing key puts a new one in its place."""
    try:
        replacement = _keyring().revoke(kid)
    except (RuntimeError, LookupError) as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"Revoked {kid}: every token it signed is refused from now on.")
    if replacement is not None:
        click.echo(f"It was the signing key: new signing key {replacement.kid}"
                   f" ({replacement.alg}). Access tokens it signed are refused; clients"
                   " refresh to get new ones.")
    audit.record_alone("signing_key_revoked", ClientInfo(user_agent=f"flask keys revoke {kid}"))


@keys.command("list")
def list_keys() -> None:
    """The keys in force, the signing key first. A revoked key is gone from the list at once
    (the audit trail keeps `signing_key_revoked`)."""
    ring = _keyring()
    signing, *others = ring.in_force()
    source = " (SVC_JWT_KEYS)" if ring.is_static else f", created {_utc(signing.created_at)}"
    click.echo(f"{signing.kid}  {signing.alg}  signs{source}")
    for key in others:
        click.echo(f"{key.kid}  {key.alg}  {_verifying_status(key, ring.keep_for)}")


def _verifying_status(key: SigningKey, keep_for: int) -> str:
    if key.retired_at is None:  # a key after the first in SVC_JWT_KEYS
        return "verifies (SVC_JWT_KEYS)"
    return (f"retired {_utc(key.retired_at)}: verifies only tokens issued before then,"
            f" until {_utc(key.retired_at + keep_for)}")


def _utc(timestamp: int) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@sessions_cli.command("purge-expired")
def purge_expired() -> None:
    click.echo(f"Deleted {sessions.purge_expired()} ended sessions.")
    click.echo(f"Deleted {throttle.purge_stale()} failure counters of windows long past.")
    click.echo(f"Deleted {pending.purge_expired()} pending sign-ins long expired.")


@click.command("purge")
@with_appcontext
def purge() -> None:
    """Delete what is past its retention: ended sessions, old failure counters, expired
    handoff codes and emailed tokens, old audit events. Run it daily from cron."""
    for step in retention.STEPS:
        click.echo(f"Deleted {step.run()} {step.what}.")


@outbox_cli.command("status")
def outbox_status() -> None:
    found = outbox_ops.summary()
    click.echo(", ".join(f"{status} {count}" for status, count in found.counts.items()))
    if found.oldest_pending is not None:
        click.echo(f"oldest pending job promised at {found.oldest_pending.isoformat()}")
    for job in found.failed:
        finished = job.finished_at.isoformat() if job.finished_at else "-"
        click.echo(f"failed {job.id} {job.kind} after {job.attempts} attempts"
                   f" ({job.last_error or 'unknown error'}) at {finished}")


@outbox_cli.command("retry")
@click.option("--failed", is_flag=True, help="Also put back the jobs whose attempts ran out.")
def outbox_retry(failed: bool) -> None:
    """Jobs waiting for a later attempt are due now; the running workers send them."""
    click.echo(f"{outbox_ops.retry(failed=failed)} mail jobs are due now.")


@outbox_cli.command("purge")
@click.option("--days", type=click.IntRange(min=0), default=None,
              help="Keep finished jobs this many days (default: SVC_MAIL_RETENTION_DAYS).")
@click.option("--failed", is_flag=True, help="Also delete failed jobs: their mail never goes.")
def outbox_purge(days: int | None, failed: bool) -> None:
    kept = current_app.config["MAIL_RETENTION_DAYS"] if days is None else days
    deleted = outbox_ops.purge(timedelta(days=float(kept)), failed=failed)
    click.echo(f"Deleted {deleted} mail jobs finished over {kept} days ago.")


@events_cli.command("list")
@click.option("--site", default=None, help="Only this site's deliveries.")
@click.option("--status", type=click.Choice(outbox_ops.STATUSES), default=None)
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
def list_deliveries(site: str | None, status: str | None, limit: int) -> None:
    """The latest deliveries of account events, newest first."""
    for found in deliveries.recent(site, status, limit):
        row = found.delivery
        due = (f" next {row.next_attempt_at.isoformat()}" if row.status == Delivery.PENDING
               else "")
        error = f" ({row.last_error})" if row.last_error else ""
        click.echo(f"{row.created_at.isoformat()} {row.event_id} {found.event_type or '-'} -> "
                   f"{row.site} {row.kind}: {row.status} after {row.attempts} attempts"
                   f"{error}{due}")


@events_cli.command("retry")
@click.option("--failed", is_flag=True, help="Also put back deliveries whose attempts ran out.")
@click.option("--site", default=None, help="Only this site's deliveries.")
def retry_deliveries(failed: bool, site: str | None) -> None:
    """Deliveries waiting for a later attempt are due now; the running workers send them."""
    click.echo(f"{deliveries.retry(failed=failed, site=site)} deliveries are due now.")


@clients_cli.command("add")
@click.argument("name")
@click.option("--scope", "scopes", multiple=True, required=True,
              # The values: click (8.2 on) matches Enum members by their names (USERS_PLAN).
              type=click.Choice([scope.value for scope in service_clients.AdminScope]),
              help="An admin API scope the client may ask for; repeat for several.")
@friendly_errors
def add_client(name: str, scopes: tuple[str, ...]) -> None:
    """Register a program that calls the admin API (client_credentials, HTTP Basic)."""
    registered = service_clients.add(name, list(scopes))
    click.echo(f"client_id {registered.service.client_id}\n"
               f"client_secret {registered.client_secret}\n"
               f"scopes {' '.join(registered.service.scopes)}\n"
               "The secret is shown this once; `clients rotate-secret` makes a new one.")


@clients_cli.command("list")
def list_clients() -> None:
    """The service clients and their scopes."""
    for service in service_clients.all_services():
        click.echo(f"{service.name}: {' '.join(service.scopes)}")


@clients_cli.command("rotate-secret")
@click.argument("name")
@friendly_errors
def rotate_client_secret(name: str) -> None:
    """A new secret for a service client; the old one stops at once."""
    click.echo(f"client_secret {service_clients.rotate_secret(name)}\n"
               "The old secret no longer works; this one is shown this once.")


@clients_cli.command("remove")
@click.argument("name")
def remove_client(name: str) -> None:
    """Remove a service client: its tokens are refused from now on."""
    if not service_clients.remove(name):
        raise click.ClickException(f"No service client is called {name}.")
    click.echo(f"Removed {name}.")


def register(app: Flask) -> None:
    for group in (users, keys, sessions_cli, sites_cli, outbox_cli, clients_cli, events_cli,
                  purge):
        app.cli.add_command(group)
