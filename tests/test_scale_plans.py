"""Each list and lookup that grew with the number of accounts reads an index in the order it
needs (issue 34, "flat as the data grows"; issue 36's search): the plans PostgreSQL makes for the
statements the service sends, in a database with a non-C collation (ICU en-US, as production
databases usually have) and a few thousand analyzed rows, with sequential scans discouraged. The
figures at 10^6 accounts are bench/scale.py's."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy import func, select, text

from app.domain import deliveries
from app.domain.accounts import emails
from app.domain.admin import activity, directory
from app.domain.admin.pages import cursor_of
from app.domain.mail import outbox_ops
from app.extensions import db
from app.infra.live_sql import LIVE_ACCOUNT
from app.models import User
from tests.support.apps import FakeClock, build_app, dispose_app
from tests.support.databases import build_schema, selected_kinds
from tests.support.plans import FROM_ACCOUNTS, Plan, Sent, captured, explain, statements_of

pytestmark = pytest.mark.skipif("postgresql" not in selected_kinds(),
                                reason="plans are PostgreSQL's (SVC_TEST_DATABASE=postgresql)")
ACCOUNTS = 3000
ACCOUNTS_SQL = f"""
    INSERT INTO users (id, email, email_key, full_name, plan, email_verified, created_at,
                       disabled_at, language, operator)
    SELECT gen_random_uuid()::text, 'person' || i || '@example.com',
           'person' || i || '@example.com', 'Person ' || md5(i::text),
           CASE WHEN i % 100 = 0 THEN 'enterprise' WHEN i % 10 = 0 THEN 'pro' ELSE 'free' END,
           true, timestamptz '2025-01-01' + i * interval '1 hour',
           CASE WHEN i % 50 = 0 THEN timestamptz '2026-01-01' END, 'de', false
    FROM generate_series(1, {ACCOUNTS}) i"""  # noqa: S608 (a number of ours)


# The oldest account, signed in on 2,000 devices.
BUSY_SQL = """
    INSERT INTO sessions (id, user_id, provider, created_at, last_used_at, expires_at)
    SELECT gen_random_uuid()::text, (SELECT id FROM users ORDER BY created_at LIMIT 1),
           'password', now(), now(), now() + interval '30 days' FROM generate_series(1, 2000)"""


@pytest.fixture(scope="module")
def app(postgres_server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    name = f"t_plans_{uuid.uuid4().hex[:12]}"
    with postgres_server.connect(autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8' "
                           "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'")
    folder: Path = tmp_path_factory.mktemp("plans")
    url = postgres_server.url(name)
    build_schema(folder, url)
    with postgres_server.connect(name) as connection:
        for statement in (ACCOUNTS_SQL, *FROM_ACCOUNTS, BUSY_SQL):
            connection.execute(statement)
        connection.commit()
    with postgres_server.connect(name, autocommit=True) as connection:
        connection.execute("VACUUM ANALYZE")
    built = build_app(folder / "instance", FakeClock(), {}, url)
    yield built
    dispose_app(built)
    postgres_server.drop_database(name)


@pytest.fixture(params=["custom", "generic"])
def generic(request: pytest.FixtureRequest) -> bool:
    """Each statement's plan for its parameters, and the generic plan PostgreSQL may keep for
    it once psycopg has prepared it (after 5 runs on a connection)."""
    return bool(request.param == "generic")


def plans_of(app: Flask, run: Callable[[], object], generic: bool = False) -> list[Plan]:
    sent = statements_of(app, run)
    with app.app_context(), db.engine.connect() as connection:
        connection.exec_driver_sql("SET enable_seqscan = off")
        found = [explain(connection, statement, generic=generic) for statement in sent]
        connection.rollback()
    return found


@dataclass(frozen=True)
class Someone:
    id: str
    email: str
    full_name: str
    created_at: datetime


def _middle(app: Flask) -> Someone:
    with app.app_context():
        found = db.session.execute(select(User.id, User.email, User.full_name, User.created_at)
                                   .order_by(User.created_at, User.id)
                                   .offset(ACCOUNTS // 2).limit(1)).one()
        db.session.rollback()
        return Someone(*found)


def _oldest_id(app: Flask) -> str:
    with app.app_context():
        return str(db.session.scalar(select(User.id).order_by(User.created_at).limit(1)))


def _one(plans: list[Plan]) -> Plan:
    assert len(plans) == 1, plans
    return plans[0]


def test_a_mails_language_is_found_by_the_address_index(app, generic):
    address = _middle(app).email
    plan = _one(plans_of(app, lambda: emails.reset_password(address, "token", 30), generic))
    assert plan.indexes == {"ix_users_email"}


USERS_PAGES: dict[str, tuple[Callable[[Someone], directory.Search], str]] = {
    "all": (lambda _: directory.Search(), "ix_users_created_at_id"),
    "a plan": (lambda _: directory.Search(plan="pro"), "ix_users_plan_created_at_id"),
    "the disabled": (lambda _: directory.Search(status=directory.Status.DISABLED),
                     "ix_users_disabled_created_at_id"),
    "the active": (lambda _: directory.Search(status=directory.Status.ACTIVE),
                   "ix_users_created_at_id"),
}


@pytest.mark.parametrize("which", list(USERS_PAGES))
@pytest.mark.parametrize("page", ["first", "after a cursor"])
def test_a_page_of_accounts_is_read_in_order_from_an_index(app, which, page):
    middle = _middle(app)
    search, index = USERS_PAGES[which]
    cursor = cursor_of([middle.created_at.isoformat(), middle.id]) if page != "first" else None
    plan = _one(plans_of(app, lambda: directory.search_users(search(middle), 50, cursor)))
    assert index in plan.indexes
    assert "Sort" not in plan.kinds  # the index's order: the page ends at its 51st row
    if cursor:  # one row comparison, which the index starts from
        (scan,) = [node for node in plan.nodes() if node.get("Index Name") == index]
        assert "ROW(created_at" in scan["Index Cond"]


def test_an_address_prefix_is_a_range_of_the_unique_key_under_any_collation(app):
    prefix = _middle(app).email[:9]
    plan = _one(plans_of(app, lambda: directory.search_users(directory.Search(prefix), 50)))
    assert plan.indexes == {"uq_users_email_key"}
    (scan,) = [node for node in plan.nodes() if node.get("Index Name") == "uq_users_email_key"]
    assert "email_key" in scan["Index Cond"]


@pytest.mark.parametrize("part", ["a name", "an address", "an id"])
def test_the_support_search_reads_the_trigram_index(app, part):
    middle = _middle(app)
    words = {"a name": middle.full_name[-12:].upper(), "an address": middle.email[2:9],
             "an id": middle.id[4:16]}[part]
    plan = _one(plans_of(app, lambda: directory.search_users(
        directory.Search(text=words), 50)))
    assert "ix_users_search_trgm" in plan.indexes


def test_the_lists_of_accounts_are_planned_for_their_values_each_time(app):
    """A generic plan (any values) of a search or of a rare plan's page walks every account in
    creation order: the lists ask PostgreSQL for a plan of their own values, every time."""
    with app.test_request_context(), captured(app, ("SET", "SELECT")) as sent:
        directory.search_users(directory.Search(text="person", plan="pro"), 50)
        db.session.rollback()
    assert [statement for statement, _ in sent] == [
        "SET LOCAL plan_cache_mode = force_custom_plan", sent[1][0]]
    assert sent[1][0].startswith("SELECT")


def test_an_unfiltered_page_needs_no_plan_of_its_own(app):
    """Its generic plan reads the creation index in order too, so it asks for none (the admin
    list's budget counts the statement it saves)."""
    middle = _middle(app)
    cursor = cursor_of([middle.created_at.isoformat(), middle.id])
    with app.test_request_context(), captured(app, ("SET", "SELECT")) as sent:
        directory.search_users(directory.Search(), 50, cursor)
        db.session.rollback()
    assert len(sent) == 1 and sent[0][0].startswith("SELECT")
    plan = _one(plans_of(app, lambda: directory.search_users(directory.Search(), 50, cursor),
                         generic=True))
    assert "ix_users_created_at_id" in plan.indexes and "Sort" not in plan.kinds


def test_a_sessions_check_reads_that_session_alone_in_a_generic_plan_too(app, generic):
    """verify's look-up on a cache miss (app/infra/live_sessions.py), prepared by psycopg:
    by the session's key, never through the account's sessions (2,000 here)."""
    with app.app_context():
        busy, session_id = db.session.execute(text(
            "SELECT user_id, id FROM sessions WHERE user_id = "
            "(SELECT id FROM users ORDER BY created_at LIMIT 1) LIMIT 1")).one()
        db.session.rollback()
    assert LIVE_ACCOUNT.selected_columns[0].name == "id"  # the account's id, compared after
    sent = statements_of(app, lambda: db.session.execute(
        LIVE_ACCOUNT, {"session_id": session_id, "at": datetime.now(UTC)}).one())
    with app.app_context(), db.engine.connect() as connection:
        plan = explain(connection, _one_sent(sent), analyze=True, generic=generic)
    assert "pk_sessions" in plan.indexes and "ix_sessions_user_id" not in plan.indexes
    assert plan.scanned <= 3  # the session, its account, its identities (none)
    assert busy


def _one_sent(sent: list[Sent]) -> Sent:
    assert len(sent) == 1, sent
    return sent[0]


def test_an_accounts_events_are_read_from_its_own_entries(app, generic):
    oldest = _oldest_id(app)  # all its events are older than everyone else's
    plan = _one(plans_of(app, lambda: activity.account_events(
        oldest, activity.EventFilter(), 50), generic))
    assert plan.indexes == {"ix_audit_events_user_id_at_id"}
    with app.app_context(), db.engine.connect() as connection:
        (sent,) = statements_of(app, lambda: activity.account_events(
            oldest, activity.EventFilter(), 50))
        assert explain(connection, sent, analyze=True,
                       generic=generic).scanned == 5  # its own, no one else's


@pytest.mark.parametrize(("where", "index"), [
    ({}, "ix_event_deliveries_created_at_id"),
    ({"site": "shop"}, "ix_event_deliveries_site_created_at_id"),
    ({"status": "failed"}, "ix_event_deliveries_status_created_at_id"),
])
def test_the_latest_deliveries_are_read_backwards_from_an_index(app, where, index, generic):
    plan = _one(plans_of(app, lambda: deliveries.recent(**where), generic))
    assert index in plan.indexes
    assert "Sort" not in plan.kinds


def test_the_outbox_gauges_read_the_waiting_jobs_only(app):
    plans = plans_of(app, outbox_ops.waiting)
    assert plans and all(plan.indexes == {"ix_mail_jobs_status_next_attempt"}
                         for plan in plans)
    with app.app_context(), db.engine.connect() as connection:
        for statement in statements_of(app, outbox_ops.waiting):
            for generic in (False, bool(statement[1])):  # once prepared too
                assert explain(connection, statement, analyze=True,
                               generic=generic).scanned <= 500  # the backlog
        total = connection.execute(select(func.count()).select_from(
            db.metadata.tables["mail_jobs"])).scalar()
    assert total == ACCOUNTS + 500


def test_the_metrics_count_every_waiting_job(app):
    with app.app_context():
        counts, oldest = outbox_ops.waiting()
        db.session.rollback()
    assert counts == {"pending": 500, "failed": 0}
    assert oldest is not None and oldest < datetime.now(UTC)
