"""The family sites' CORS origins, kept by each worker so that a call from a browser (every
call of the client kit carries `Origin`) reads no database: the copy is current while what the
worker has read of the session feed says no site changed (infra/live_sessions.py's
`feed_version`), or, without a trusted feed, while the sites' mark in the database is the one it
was read with. The mark comes with the request's session lookup when that went to the database
(in its statement: `sites_mark_read`), so a bearer call costs no statement more with `Origin`
than without; otherwise (no bearer, a refused token, or the Origin asked first) it is one
primary-key read on the driver. Every change of a registered site changes the mark in its
transaction and is published once it commits (registration.py).
Why: docs/decisions.md, "Budgets and the hot paths"."""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass

from flask import current_app
from sqlalchemy import bindparam, select, update

from app.db.driver_query import DriverQuery
from app.db.rows import changed
from app.db.transactions import until_commit
from app.domain.clients.sites import all_sites
from app.domain.services import services
from app.extensions import db
from app.models import SiteRegistryMark

_MARK = select(SiteRegistryMark.mark).where(SiteRegistryMark.id == bindparam("id"))
_CHANGED = "svc_sites_changed"  # until_commit: the open transaction changed a site


@dataclass(frozen=True)
class _Copy:
    origins: frozenset[str]
    version: tuple[int, int] | None  # the feed's, when read (None: it was not trusted)
    mark: str  # the database's, when read ("": none yet)


class FamilyOrigins:
    """One worker's copy (made on first use; threads share it)."""

    def __init__(self) -> None:
        self._copy: _Copy | None = None
        self._mark_query: DriverQuery | None = None
        self._lock = threading.Lock()

    def allows(self, untrusted_origin: str) -> bool:
        copy = self._copy
        live = services().live_sessions
        version = live.feed_version()
        if version is not None:  # the feed decides
            if copy is None or copy.version != version:
                copy = self._read(version, None)
        else:
            mark = live.sites_mark_read()
            if mark is None:
                mark = self._database_mark()
            if copy is None or copy.mark != mark:
                copy = self._read(version, mark)
        return untrusted_origin in copy.origins

    def _read(self, version: tuple[int, int] | None, mark: str | None) -> _Copy:
        # The mark first (given: read earlier in this request): a change that commits while the
        # sites are read leaves a copy whose mark is already old, read again at the next call.
        with self._lock:
            if mark is None:
                mark = self._database_mark()
            origins = frozenset(origin for site in all_sites().values() if site.first_party
                                for origin in site.origins)
            self._copy = _Copy(origins, version, mark)
            return self._copy

    def _database_mark(self) -> str:
        # Straight on the driver (db/driver_query.py): no unit of work for one primary key.
        if self._mark_query is None or self._mark_query.engine is not db.engine:
            self._mark_query = DriverQuery(_MARK, db.engine)
        row = self._mark_query.first(id=1)
        return "" if row is None else str(row[0])  # "": no site changed yet, as the lookup's


def note_sites_changed() -> None:
    """A registered site changes in the open transaction: its mark changes with it, and once it
    commits every worker of every instance is told (the feed)."""
    live = services().live_sessions
    until_commit(_CHANGED, _new_mark, lambda _mark: live.publish_sites_changed())


def _new_mark() -> str:
    mark = secrets.token_hex(16)
    if not changed(update(SiteRegistryMark).where(SiteRegistryMark.id == 1).values(mark=mark)
                   .execution_options(synchronize_session=False)):
        db.session.add(SiteRegistryMark(id=1, mark=mark))
        db.session.flush()
    return mark


_KEY = "svc_auth.family_origins"  # the app's copy, in app.extensions


def is_family_origin(untrusted_origin: str) -> bool:
    """Whether this is the origin of one of the family's own sites, the only ones that call
    the family API from a browser (CORS): asked of this worker's copy."""
    copy: FamilyOrigins | None = current_app.extensions.get(_KEY)
    if copy is None:
        copy = current_app.extensions.setdefault(_KEY, FamilyOrigins())
    return copy.allows(untrusted_origin)
