"""One read statement, compiled once and run straight on the database driver, on a connection a
thread: for the bearer lookup, SQLAlchemy's execution path costs some thirty times the query.
Why: docs/architecture/design-notes.md, "Live sessions and revocation"."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Select, event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

Processor = Callable[[Any], Any] | None


class _HeldConnection:
    """A pool connection kept out of the pool for one thread; closed when the thread ends."""

    def __init__(self, engine: Engine) -> None:
        pooled = engine.raw_connection()
        # Closed, never handed back to the pool in autocommit.
        self.discard = weakref.finalize(self, pooled.invalidate)
        driver = pooled.driver_connection
        assert driver is not None  # a connection just checked out of the pool has its driver's
        self.driver = driver
        if engine.dialect.name == "postgresql":
            self.driver.autocommit = True  # SQLite's connections are set up that way already


class DriverQuery:
    def __init__(self, statement: Select[*tuple[Any, ...]], engine: Engine) -> None:
        dialect = engine.dialect
        compiled = statement.compile(dialect=dialect)
        self.engine, self.sql = engine, compiled.string
        self._names: Sequence[str] | None = compiled.positiontup  # None: named parameters
        self._binds: dict[str, Processor] = {
            name: bind.type.dialect_impl(dialect).bind_processor(dialect)
            for name, bind in compiled.binds.items()}
        # The columns whose values the driver does not give as they are read (by position).
        self._results: list[tuple[int, Callable[[Any], Any]]] = [
            (index, process) for index, column in enumerate(statement.selected_columns)
            if (process := column.type.dialect_impl(dialect).result_processor(dialect, None))]
        self._dbapi_error: type[Exception] = dialect.loaded_dbapi.Error
        self._local = threading.local()
        self._every_held: weakref.WeakSet[_HeldConnection] = weakref.WeakSet()
        event.listen(engine, "engine_disposed", self._discard_every_held)

    def first(self, **values: Any) -> tuple[Any, ...] | None:
        parameters = self._parameters(values)
        try:
            row = self._run(parameters)
        except self._dbapi_error:
            try:
                row = self._run(parameters)  # once more, on a new connection
            except self._dbapi_error as error:
                raise DBAPIError.instance(self.sql, parameters, error,
                                          self._dbapi_error) from error
        if row is None:
            return None
        found = list(row)
        for index, process in self._results:
            found[index] = process(found[index])
        return tuple(found)

    def _run(self, parameters: Sequence[Any] | dict[str, Any]) -> Sequence[Any] | None:
        held: _HeldConnection | None = getattr(self._local, "held", None)
        if held is None or not held.discard.alive:  # none yet, or closed by engine.dispose()
            held = self._local.held = _HeldConnection(self.engine)
            self._every_held.add(held)
        try:
            cursor = held.driver.cursor()
            try:
                cursor.execute(self.sql, parameters)
                row: Sequence[Any] | None = cursor.fetchone()
                return row
            finally:
                cursor.close()
        except self._dbapi_error:
            self._local.held = None
            held.discard()
            raise

    def _discard_every_held(self, _engine: Engine) -> None:
        # engine.dispose() means "close every connection": these too. A thread whose connection
        # went this way gets a new one on its next run.
        for held in list(self._every_held):
            held.discard()

    def _parameters(self, values: dict[str, Any]) -> Sequence[Any] | dict[str, Any]:
        processed = {name: value if (process := self._binds[name]) is None else process(value)
                     for name, value in values.items()}
        if self._names is None:
            return processed
        return tuple(processed[name] for name in self._names)
