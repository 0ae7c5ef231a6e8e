"""The embedded default's instance folder: the database, keys and secret are the owner's alone."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from app import create_app
from app.domain.accounts import accounts
from app.domain.services import KEY as SERVICES_KEY
from app.extensions import db
from tests.support.accounts import PASSWORD


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def usual_umask() -> Iterator[None]:
    """The umask most shells have (022): files made without care come out 0644."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_the_default_instance_is_readable_by_its_owner_alone(monkeypatch, tmp_path, usual_umask):
    monkeypatch.delenv("SVC_DATABASE_URL", raising=False)
    monkeypatch.delenv("SVC_SECRET_KEY", raising=False)
    instance = tmp_path / "instance"
    app = create_app({"INSTANCE_PATH": str(instance)})
    with app.app_context():
        db.create_all()
        accounts.create_user("ada@example.com", PASSWORD, "Ada")
        db.session.commit()
        app.extensions[SERVICES_KEY].access_tokens.keyring.rotate()  # the keyring file too
        assert db.engine.url.database == str(instance / "svc-auth.db")
        files = sorted(instance.iterdir())
        assert {path.name for path in files} >= {
            "svc-auth.db", "svc-auth.db-wal", "svc-auth.db-shm", "secret-key", "jwt-keys.json"}
        assert mode(instance) == 0o700
        assert {path.name: mode(path) for path in files} == {path.name: 0o600 for path in files}
        db.session.remove()
        db.engine.dispose()


def test_an_existing_database_file_is_kept(monkeypatch, tmp_path, usual_umask):
    monkeypatch.delenv("SVC_DATABASE_URL", raising=False)
    instance = tmp_path / "instance"
    app = create_app({"INSTANCE_PATH": str(instance), "SECRET_KEY": "test"})
    with app.app_context():
        db.create_all()
        accounts.create_user("ada@example.com", PASSWORD, "Ada")
        db.session.commit()
        db.engine.dispose()
    again = create_app({"INSTANCE_PATH": str(instance), "SECRET_KEY": "test"})
    with again.app_context():
        assert accounts.find_by_email("ada@example.com") is not None
        db.session.remove()
        db.engine.dispose()
