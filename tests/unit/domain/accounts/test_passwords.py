"""Passwords: the policy (through POST /api/v2/auth/signup) and the argon2id hasher.

SECURITY.md section A and DESIGN.md section 6: 8 to 256 characters after NFKC, any character, no
composition rules; common passwords, the email and the brand word refused with the reason;
argon2id at OWASP's parameters with a unique salt; verified exactly as entered, after NFKC only;
rehashed on login when the parameters change.
"""

from __future__ import annotations

import time
import unicodedata
from typing import Any

import pytest
from argon2 import PasswordHasher

from app.config import DEFAULTS
from app.extensions import db
from app.infra import hashing
from app.infra.hashing import Hasher
from app.models import User
from tests.support.accounts import PASSWORD

SIGNUP = "/api/v2/auth/signup"
LOGIN = "/api/v2/auth/login"
EMAIL = "grace.hopper@example.com"
TEST_PARAMS = "$argon2id$v=19$m=64,t=1,p=1$"  # conftest's cheap argon2id


def signup(client, password: str, email: str = EMAIL):  # type: ignore[no-untyped-def]
    return client.post(SIGNUP, json={"email": email, "password": password})


def log_in(client, password: str, email: str = EMAIL):  # type: ignore[no-untyped-def]
    return client.post(LOGIN, json={"email": email, "password": password})


def assert_refused(response: Any, password: str, reason: str) -> None:
    """422 invalid_body, an error at #/password whose detail says why, and no echo."""
    assert response.status_code == 422, response.get_json()
    assert response.mimetype == "application/problem+json"
    body = response.get_json()
    assert body["code"] == "invalid_body"
    details = [e["detail"] for e in body.get("errors", []) if e["pointer"] == "#/password"]
    assert details, body
    assert any(reason.lower() in d.lower() for d in details), details
    if len(password) >= 10:  # shorter ones ("password") may be words of the detail itself
        assert password not in response.get_data(as_text=True)


def stored_hash(app, user_id: str) -> str:  # type: ignore[no-untyped-def]
    with app.app_context():
        found = db.session.get(User, user_id)
        assert found is not None and found.password_hash is not None
        return found.password_hash


# Length ---------------------------------------------------------------------------------------

def test_seven_characters_refused_eight_accepted(client):  # type: ignore[no-untyped-def]
    assert_refused(signup(client, "xkcd7Qz"), "xkcd7Qz", "at least 8 characters")
    assert signup(client, "xkcd7Qzp").status_code == 201


def _long(n: int) -> str:
    """n characters, not a common password, not made of one repeated letter."""
    return "".join("abcdefghij klmnopqrstuvwxyz"[(i * 7) % 27] for i in range(n))


def test_256_accepted_257_refused(client):  # type: ignore[no-untyped-def]
    assert_refused(signup(client, _long(257)), _long(257), "at most 256 characters")
    response = signup(client, _long(256))
    assert response.status_code == 201, response.get_json()
    assert log_in(client, _long(256)).status_code == 200


def test_length_counts_after_nfkc(client):  # type: ignore[no-untyped-def]
    """Four 'ﬁ' ligatures are eight characters once normalised; 100 'ﬃ' are 300."""
    assert_refused(signup(client, "\ufb03" * 100), "\ufb03" * 100, "at most 256")
    assert signup(client, "\ufb01" * 4).status_code == 201
    assert log_in(client, "fifififi").status_code == 200


def test_ten_kilobytes_refused_without_hashing(client, monkeypatch):  # type: ignore[no-untyped-def]
    """Extreme input is refused before any argon2 work (no CPU-exhaustion lever)."""
    def no_hashing(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("a 10 KB password reached the hasher")

    monkeypatch.setattr(Hasher, "hash", no_hashing)
    monkeypatch.setattr(Hasher, "verify", no_hashing)
    huge = "Aa1!" * 2560
    started = time.perf_counter()
    response = signup(client, huge)
    assert time.perf_counter() - started < 1.0
    assert_refused(response, huge, "characters")


# Common, contextual -----------------------------------------------------------------------------

@pytest.mark.parametrize("password", [
    "password", "PASSWORD", "password12345678", "Password123!", "qwertyuiop", "12345678",
    "iloveyou", "!!password!!",
])
def test_common_passwords_refused(client, password):  # type: ignore[no-untyped-def]
    """`password12345678` and `Password123!` are refused by the "core" rule: the common word
    with digits and symbols stripped."""
    assert_refused(signup(client, password), password, "too common")


@pytest.mark.parametrize("password", [
    EMAIL, EMAIL.upper(), "grace.hopper", "Grace.Hopper", "grace.hopper1906", "gracehopper2024!",
    "svc-2024-2025", "SVC12345678", "__svc__2024",
])
def test_email_and_brand_refused(client, password):  # type: ignore[no-untyped-def]
    assert_refused(signup(client, password), password, "email address or the service's name")


def test_brand_word_with_digits_refused(client):  # type: ignore[no-untyped-def]
    """`svc2024` is too short anyway; either reason will do, as long as it is refused."""
    response = signup(client, "svc2024")
    assert response.status_code == 422
    assert [e["pointer"] for e in response.get_json()["errors"]] == ["#/password"]


def test_context_rule_control(client):  # type: ignore[no-untyped-def]
    """Someone else's local part is fine: the rule is about this account's email."""
    assert signup(client, "grace.hopper1906", email="ada@example.com").status_code == 201


class TestOtherBrand:
    """The brand word comes from configuration."""

    @pytest.fixture
    def settings(self) -> dict[str, Any]:
        return {"BRAND": "acme"}

    def test_configured_brand_refused(self, client):  # type: ignore[no-untyped-def]
        assert_refused(signup(client, "Acme2024!"), "Acme2024!", "service's name")

    def test_default_brand_is_then_an_ordinary_word(self, client):  # type: ignore[no-untyped-def]
        assert signup(client, "svc-2024-2025").status_code == 201


# Anything goes --------------------------------------------------------------------------------

@pytest.mark.parametrize("password", [
    "".join("abcdefghijklmnopqrstuvwxyz"[(i * 7) % 26] for i in range(128)),
    "correct horse battery staple",
    "  spaces around and inside  ",
    "\U0001f984\U0001f308\U0001f525\U0001f389\U0001f984\U0001f308\U0001f525\U0001f389",
    "I \u2764\ufe0f my \U0001f415 very much",
    "\u043f\u0430\u0440\u043e\u043b\u044c \u0434\u043b\u0438\u043d\u043d\u044b\u0439",
], ids=["128-lowercase", "spaces", "edge-spaces", "emoji-only", "emoji-mixed", "cyrillic"])
def test_any_characters_accepted(client, password):  # type: ignore[no-untyped-def]
    """No composition rules; and the password then works, exactly as typed."""
    response = signup(client, password)
    assert response.status_code == 201, response.get_json()
    assert log_in(client, password).status_code == 200
    if password != password.strip():
        assert log_in(client, password.strip()).status_code == 401


# The hasher -----------------------------------------------------------------------------------

def test_production_parameters():  # type: ignore[no-untyped-def]
    """The defaults are OWASP's argon2id: m=19456 KiB, t=2, p=1."""
    hasher = Hasher(DEFAULTS["ARGON2_MEMORY_COST"], DEFAULTS["ARGON2_TIME_COST"],
                    DEFAULTS["ARGON2_PARALLELISM"])
    hashed = hasher.hash(PASSWORD)
    assert hashed.startswith("$argon2id$v=19$m=19456,t=2,p=1$")
    assert hasher.verify(hashed, PASSWORD) == hashing.Verification(ok=True, needs_rehash=False)
    assert not hasher.verify(hashed, PASSWORD + "!").ok


def test_same_password_two_users_different_hashes(app, make_user):  # type: ignore[no-untyped-def]
    first = stored_hash(app, make_user("a@example.com").id)
    second = stored_hash(app, make_user("b@example.com").id)
    assert first.startswith(TEST_PARAMS) and second.startswith(TEST_PARAMS)
    assert first != second
    salt_of = lambda h: h.split("$")[4]  # noqa: E731
    assert salt_of(first) != salt_of(second)
    assert len(salt_of(first)) >= 22  # at least 16 bytes of salt, base64


def test_the_password_is_never_stored(app, make_user):  # type: ignore[no-untyped-def]
    assert PASSWORD not in stored_hash(app, make_user().id)


def test_dummy_hash_for_unknown_accounts():  # type: ignore[no-untyped-def]
    hasher = Hasher(64, 1, 1)
    assert hasher.verify(None, "x") == hashing.Verification(ok=False, needs_rehash=False)
    assert hasher.verify(None, "dummy password for unknown accounts").ok is False
    assert hasher.verify("not an argon2 hash", "x").ok is False
    assert hasher.verify("", "x").ok is False


# Verified as entered, after NFKC only ---------------------------------------------------------

@pytest.mark.parametrize(("typed_at_signup", "typed_at_login"), [
    ("\ufb01ne \ufb01sh \ufb01llet", "fine fish fillet"),
    ("fine fish fillet", "\ufb01ne \ufb01sh \ufb01llet"),
    ("\uff53\uff45\uff43\uff52\uff45\uff54 tunnel", "secret tunnel"),
    ("secret tunnel", "\uff53\uff45\uff43\uff52\uff45\uff54 tunnel"),
    (unicodedata.normalize("NFC", "cr\u00e8me br\u00fbl\u00e9e"),
     unicodedata.normalize("NFD", "cr\u00e8me br\u00fbl\u00e9e")),
    (unicodedata.normalize("NFD", "cr\u00e8me br\u00fbl\u00e9e"),
     unicodedata.normalize("NFC", "cr\u00e8me br\u00fbl\u00e9e")),
], ids=["ligature-then-plain", "plain-then-ligature", "fullwidth-then-plain",
        "plain-then-fullwidth", "nfc-then-nfd", "nfd-then-nfc"])
def test_nfkc_equivalent_forms_log_in(client, typed_at_signup, typed_at_login):  # type: ignore[no-untyped-def]
    assert typed_at_signup != typed_at_login
    assert signup(client, typed_at_signup).status_code == 201
    assert log_in(client, typed_at_login).status_code == 200


def test_case_swapped_is_refused(client, user):  # type: ignore[no-untyped-def]
    assert log_in(client, PASSWORD.swapcase(), user.email).status_code == 401
    assert log_in(client, PASSWORD.upper(), user.email).status_code == 401
    assert log_in(client, PASSWORD, user.email).status_code == 200


def test_no_truncation(client):  # type: ignore[no-untyped-def]
    """bcrypt would accept the first 72 bytes of a longer password; argon2id must not."""
    password = _long(100)
    assert signup(client, password).status_code == 201
    assert log_in(client, password[:72]).status_code == 401
    assert log_in(client, password[:99]).status_code == 401
    assert log_in(client, password + "x").status_code == 401
    assert log_in(client, password).status_code == 200


# Rehash on login ------------------------------------------------------------------------------

def _set_hash(app, user_id: str, password_hash: str) -> None:  # type: ignore[no-untyped-def]
    with app.app_context():
        found = db.session.get(User, user_id)
        assert found is not None
        found.password_hash = password_hash
        db.session.commit()


def test_rehash_on_login_when_parameters_change(app, client, user):  # type: ignore[no-untyped-def]
    weak = PasswordHasher(memory_cost=8, time_cost=1, parallelism=1).hash(PASSWORD)
    _set_hash(app, user.id, weak)
    assert log_in(client, PASSWORD, user.email).status_code == 200
    rehashed = stored_hash(app, user.id)
    assert rehashed.startswith(TEST_PARAMS)
    assert log_in(client, PASSWORD, user.email).status_code == 200  # the new hash works


def test_no_rehash_on_failed_login(app, client, user):  # type: ignore[no-untyped-def]
    weak = PasswordHasher(memory_cost=8, time_cost=1, parallelism=1).hash(PASSWORD)
    _set_hash(app, user.id, weak)
    assert log_in(client, "not the password", user.email).status_code == 401
    assert stored_hash(app, user.id) == weak


def test_no_rehash_when_parameters_are_current(app, client, user):  # type: ignore[no-untyped-def]
    before = stored_hash(app, user.id)
    assert log_in(client, PASSWORD, user.email).status_code == 200
    assert stored_hash(app, user.id) == before
