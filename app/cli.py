"""Operator commands: `flask --app wsgi users|keys|sessions|sites|outbox|events|clients ...`
and `purge` (users: app/cli_users.py, sites: app/cli_sites.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import click
from flask import Flask, current_app
from flask.cli import AppGroup, with_appcontext

from app.cli_sites import sites_cli
from app.cli_support import friendly_errors
from app.cli_users import users
from app.domain import audit, deliveries, retention
from app.domain.audit import AuditName, ClientInfo
from app.domain.clients import service_clients
from app.domain.factors import pending
from app.domain.limits import throttle
from app.domain.mail import outbox_ops
from app.domain.services import services
from app.domain.sessions import sessions
from app.extensions import db
from app.infra.keys import Keyring, SigningKey
from app.infra.settings import settings
from app.models import Delivery
from app.version import VERSION

keys = AppGroup("keys", help="Manage the access-token signing keys.")
sessions_cli = AppGroup("sessions", help="Manage sign-in sessions.")
outbox_cli = AppGroup("outbox", help="See and manage the mail the service has promised.")
clients_cli = AppGroup("clients", help="Manage the service clients of the admin API.")
events_cli = AppGroup("events", help="See and retry the deliveries of events to client sites.")


def _keyring() -> Keyring:
    return services().access_tokens.keyring


@keys.command("rotate", short_help="Make a new signing key.")
def rotate() -> None:
    """Make a new signing key; the old one keeps verifying the tokens it signed until they
    expire."""
    try:
        key = _keyring().rotate()
    except RuntimeError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"New signing key {key.kid} ({key.alg}); older keys verify the tokens they signed"
               " before now, until those expire.")


# A kid is base64url, so one in 64 starts with "-": read it as the argument, not an option.
@keys.command("revoke", context_settings={"ignore_unknown_options": True},
               short_help="Remove a (leaked) key at once.")
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
    audit.record_alone(AuditName.SIGNING_KEY_REVOKED,
                       ClientInfo(user_agent=f"flask keys revoke {kid}"))


@keys.command("list", short_help="The keys in force.")
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


@sessions_cli.command("purge-expired", short_help="Delete ended sessions and stale counters.")
def purge_expired() -> None:
    """Delete ended sessions, failure counters of windows long past and expired pending
    sign-ins (`purge` does this and more)."""
    click.echo(f"Deleted {sessions.purge_expired()} ended sessions.")
    click.echo(f"Deleted {throttle.purge_stale()} failure counters of windows long past.")
    click.echo(f"Deleted {pending.purge_expired()} pending sign-ins long expired.")


@click.command("purge", short_help="Delete what is past its retention (daily).")
@with_appcontext
def purge() -> None:
    """Delete what is past its retention: ended sessions, old failure counters, expired
    handoff codes and emailed tokens, old audit events. Run it daily from cron.

    A step that fails is reported and the others still run; the command then exits 1."""
    failed = []
    for step in retention.STEPS:
        try:
            deleted = step.run()
        except Exception as error:  # noqa: BLE001 (any failure: the next steps still run)
            db.session.rollback()
            failed.append(step.what)
            # The first line only: a driver's message may quote every parameter it was sent.
            said = (str(error).splitlines() or [""])[0][:200]
            click.echo(f"Failed to delete {step.what}: {type(error).__name__}: {said}",
                       err=True)
            continue
        click.echo(f"Deleted {deleted} {step.what}.")
    if failed:
        raise click.ClickException(f"{len(failed)} of {len(retention.STEPS)} steps failed: "
                                   + "; ".join(failed))


@outbox_cli.command("status", short_help="Mail jobs by state, and the failed ones.")
def outbox_status() -> None:
    """How many mail jobs are in each state, the oldest pending one, and every failed one."""
    found = outbox_ops.summary()
    click.echo(", ".join(f"{status} {count}" for status, count in found.counts.items()))
    if found.oldest_pending is not None:
        click.echo(f"oldest pending job promised at {found.oldest_pending.isoformat()}")
    for job in found.failed:
        finished = job.finished_at.isoformat() if job.finished_at else "-"
        click.echo(f"failed {job.id} {job.kind} after {job.attempts} attempts"
                   f" ({job.last_error or 'unknown error'}) at {finished}")


@outbox_cli.command("retry", short_help="Make the waiting mail jobs due now.")
@click.option("--failed", is_flag=True, help="Also put back the jobs whose attempts ran out.")
def outbox_retry(failed: bool) -> None:
    """Jobs waiting for a later attempt are due now; the running workers send them."""
    click.echo(f"{outbox_ops.retry(failed=failed)} mail jobs are due now.")


@outbox_cli.command("purge", short_help="Delete finished mail jobs.")
@click.option("--days", type=click.IntRange(min=0), default=None,
              help="Keep finished jobs this many days (default: SVC_MAIL_RETENTION_DAYS).")
@click.option("--failed", is_flag=True, help="Also delete failed jobs: their mail never goes.")
def outbox_purge(days: int | None, failed: bool) -> None:
    """Delete the mail jobs sent or skipped over --days ago (failed ones too with --failed)."""
    kept = settings().mail_retention_days if days is None else days
    deleted = outbox_ops.purge(timedelta(days=float(kept)), failed=failed)
    click.echo(f"Deleted {deleted} mail jobs finished over {kept:g} days ago.")


@events_cli.command("list")
@click.option("--site", default=None, help="Only this site's deliveries.")
@click.option("--status", type=click.Choice(outbox_ops.STATUSES), default=None,
              help="Only the deliveries in this state.")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True,
              help="How many, at most.")
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


@events_cli.command("retry", short_help="Make the waiting deliveries due now.")
@click.option("--failed", is_flag=True, help="Also put back deliveries whose attempts ran out.")
@click.option("--site", default=None, help="Only this site's deliveries.")
def retry_deliveries(failed: bool, site: str | None) -> None:
    """Deliveries waiting for a later attempt are due now; the running workers send them."""
    click.echo(f"{deliveries.retry(failed=failed, site=site)} deliveries are due now.")


@clients_cli.command("add", short_help="Register a program that calls the admin API.")
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


@clients_cli.command("rotate-secret", short_help="A new secret for a service client.")
@click.argument("name")
@friendly_errors
def rotate_client_secret(name: str) -> None:
    """A new secret for a service client; the old one stops at once."""
    click.echo(f"client_secret {service_clients.rotate_secret(name)}\n"
               "The old secret no longer works; this one is shown this once.")


@clients_cli.command("remove", short_help="Remove a service client.")
@click.argument("name")
def remove_client(name: str) -> None:
    """Remove a service client: its tokens are refused from now on."""
    if not service_clients.remove(name):
        raise click.ClickException(f"No service client is called {name}.")
    click.echo(f"Removed {name}.")


@click.command("version", short_help="The release this code is.")
@with_appcontext
def version() -> None:
    """The release this code is (CHANGELOG.md) and the migration its schema needs. (`flask
    --version` is Flask's own: it names Python's, Flask's and Werkzeug's versions.)"""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory(current_app.extensions["migrate"].directory)
    click.echo(f"svc-auth {VERSION} (schema: migration {script.get_current_head()})")


def register(app: Flask) -> None:
    app.cli.add_command(version)
    for group in (users, keys, sessions_cli, sites_cli, outbox_cli, clients_cli, events_cli,
                  purge):
        app.cli.add_command(group)
