"""Password hashing never runs inside a write transaction (on SQLite: the one write lock)."""

import pytest

from app.db import transactions
from app.infra.hashing import Hasher
from tests.support.accounts import PASSWORD


@pytest.fixture
def hashing_inside_writes(monkeypatch):
    """Record, for every argon2 hash and verify, whether a write transaction was open."""
    seen = []
    for name in ("hash", "verify"):
        original = getattr(Hasher, name)

        def spy(self, *args, _original=original, **kwargs):
            seen.append(transactions._writing.get())
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(Hasher, name, spy)
    return seen


def test_signup_hashes_outside_the_write_transaction(client, hashing_inside_writes):
    response = client.post("/api/v2/auth/signup", json={
        "email": "new@example.com", "password": "a long enough passphrase"})
    assert response.status_code == 201
    assert hashing_inside_writes == [False]


def test_login_verifies_outside_the_write_transaction(client, user, hashing_inside_writes):
    client.post("/api/v2/auth/login", json={"email": user.email, "password": PASSWORD})
    client.post("/api/v2/auth/login", json={"email": user.email, "password": "wrong one!"})
    assert hashing_inside_writes == [False, False]


def test_reset_hashes_outside_the_write_transaction(client, user, mailbox,
                                                    hashing_inside_writes):
    client.post("/api/v2/auth/forgot-password", json={"email": user.email})
    token = mailbox.last_link(user.email, "/reset-password").split("token=")[1]
    hashing_inside_writes.clear()
    response = client.post("/api/v2/auth/reset-password",
                           json={"token": token, "new_password": "a brand new passphrase"})
    assert response.status_code == 200
    assert hashing_inside_writes == [False]
