"""Forgot and reset password: uniform answers, single-use purpose-bound tokens, sessions ended."""

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.support.accounts import PASSWORD
from tests.support.http import bearer

NEW_PASSWORD = "a brand new passphrase"


def forgot(client, email, **kwargs):
    return client.post("/api/v2/auth/forgot-password", json={"email": email}, **kwargs)


def reset(client, token, new_password=NEW_PASSWORD):
    return client.post("/api/v2/auth/reset-password",
                       json={"token": token, "new_password": new_password})


def token_of(link):
    return parse_qs(urlsplit(link).query)["token"][0]


def request_link(client, mailbox, email):
    assert forgot(client, email).status_code == 202
    return mailbox.last_link(email, "/reset-password")


def test_forgot_password_mails_a_link_to_the_hosted_reset_page(client, user, mailbox):
    response = forgot(client, user.email)
    assert response.status_code == 202
    assert response.get_json() == {
        "detail": "If an account exists for this email, a reset link has been sent."}
    link = mailbox.last_link(user.email, "/reset-password")
    assert link.startswith("http://127.0.0.1:5000/reset-password?token=")
    [message] = mailbox.to(user.email)
    assert message["Subject"] == "Reset your password"
    assert message.get_body(("html",)) is not None


@pytest.mark.parametrize("case", ["unknown", "disabled"])
def test_unknown_and_disabled_accounts_get_the_same_answer_and_no_mail(
        client, user, make_user, mailbox, case):
    from datetime import UTC, datetime

    if case == "disabled":
        make_user("gone@example.com", disabled_at=datetime.now(UTC))
    email = "nobody@example.com" if case == "unknown" else "gone@example.com"
    known, other = forgot(client, user.email), forgot(client, email)
    assert (known.status_code, known.data) == (other.status_code, other.data)
    ignored = {"Date", "Content-Length", "X-Request-Id"}
    assert ({k: v for k, v in known.headers if k not in ignored}
            == {k: v for k, v in other.headers if k not in ignored})
    assert mailbox.to(email) == []


def test_the_link_is_built_from_the_public_url_not_the_host_header(client, user, mailbox):
    forgot(client, user.email, headers={"Host": "evil.example",
                                        "X-Forwarded-Host": "evil.example"})
    assert mailbox.last_link(user.email, "/reset-password").startswith("http://127.0.0.1:5000/")


def test_a_reset_sets_the_password_ends_every_session_and_returns_no_tokens(
        client, user, login, mailbox):
    sessions = [login(user), login(user)]
    response = reset(client, token_of(request_link(client, mailbox, user.email)))
    assert response.status_code == 200
    assert response.get_json() == {"detail": "Password updated."}
    for tokens in sessions:
        assert client.get("/api/v2/auth/verify",
                          headers=bearer(tokens["access_token"])).status_code == 401
        assert client.post("/api/v2/auth/refresh",
                           json={"refresh_token": tokens["refresh_token"]}).status_code == 401
    old = client.post("/api/v2/auth/login", json={"email": user.email, "password": PASSWORD})
    new = client.post("/api/v2/auth/login", json={"email": user.email, "password": NEW_PASSWORD})
    assert (old.status_code, new.status_code) == (401, 200)
    assert new.get_json()["user"]["email_verified"] is True  # the inbox was proven


def test_the_owner_is_told_that_the_password_changed(client, user, mailbox):
    reset(client, token_of(request_link(client, mailbox, user.email)))
    assert [m["Subject"] for m in mailbox.to(user.email)] == [
        "Reset your password", "Your password was changed"]


def test_a_token_works_once(client, user, mailbox):
    token = token_of(request_link(client, mailbox, user.email))
    assert reset(client, token).status_code == 200
    again = reset(client, token, "yet another passphrase")
    assert again.status_code == 400 and again.get_json()["code"] == "invalid_reset_token"


def test_a_newer_request_supersedes_the_older_link(client, user, mailbox):
    older = token_of(request_link(client, mailbox, user.email))
    newer = token_of(request_link(client, mailbox, user.email))
    assert reset(client, older).status_code == 400
    assert reset(client, newer).status_code == 200


def test_a_password_change_kills_outstanding_links(app, client, user, mailbox):
    token = token_of(request_link(client, mailbox, user.email))
    from app.domain.accounts import accounts
    from app.extensions import db
    from app.models import User
    with app.app_context():
        accounts.set_password(db.session.get(User, user.id), "$argon2id$changed-elsewhere")
        db.session.commit()
    assert reset(client, token).status_code == 400


def test_a_token_expires_after_an_hour(client, user, mailbox, clock):
    token = token_of(request_link(client, mailbox, user.email))
    clock.advance(3601)
    assert reset(client, token).get_json()["code"] == "invalid_reset_token"


def test_a_weak_new_password_is_422_and_the_link_still_works(client, user, mailbox):
    token = token_of(request_link(client, mailbox, user.email))
    weak = reset(client, token, "password123")
    assert weak.status_code == 422
    assert weak.get_json()["errors"][0]["pointer"] == "#/new_password"
    assert reset(client, token).status_code == 200


@pytest.mark.parametrize("token", ["", "x" * 43, "not a token"])
def test_bad_tokens_are_400_or_422(client, token):
    response = reset(client, token)
    assert response.status_code in (400, 422)
    assert response.mimetype == "application/problem+json"


def test_a_confirmation_token_cannot_reset_a_password(client, mailbox):
    client.post("/api/v2/auth/signup", json={"email": "new@example.com",
                                             "password": "a long enough passphrase"})
    confirm_token = token_of(mailbox.last_link("new@example.com", "/confirm-email"))
    assert reset(client, confirm_token).status_code == 400


MALFORMED_ADDRESSES = ["not-an-address", "ada@example", "ada@@example.com", "a b@example.com",
                       "@example.com", "ada@", " ", "ada@exa_mple.com"]


@pytest.mark.parametrize("path", ["/api/v2/auth/forgot-password",
                                  "/api/v2/auth/resend-confirmation"])
def test_a_malformed_address_is_a_422_the_same_for_every_one(client, mailbox, path):
    """DESIGN section 5: a bad email is a 422. Its form is all it tells (nothing of accounts),
    and in one body whatever the mistake."""
    answers = [client.post(path, json={"email": email}) for email in MALFORMED_ADDRESSES]
    assert {answer.status_code for answer in answers} == {422}
    assert {answer.content_type for answer in answers} == {"application/problem+json"}
    assert len({answer.data for answer in answers}) == 1
    problem = answers[0].get_json()
    assert problem["code"] == "invalid_body"
    assert problem["errors"] == [{"pointer": "#/email",
                                  "detail": "Enter an email address, such as ada@example.com."}]
    assert client.post(path, json={"email": "nobody@example.com"}).status_code == 202
    assert mailbox.messages == []


def test_tokens_never_reach_the_log(client, user, mailbox, caplog):
    caplog.set_level("INFO")
    token = token_of(request_link(client, mailbox, user.email))
    reset(client, token)
    assert mailbox.messages
    assert token not in caplog.text and "event=password_reset" in caplog.text


class TestRateLimits:
    @pytest.fixture
    def settings(self):
        return {"RATELIMIT_ENABLED": True, "LIMIT_FORGOT": "2 per hour",
                "LIMIT_FORGOT_IP": "4 per hour", "LIMIT_RESET": "3 per minute"}

    def test_forgot_is_limited_per_email_from_any_address(self, client):
        statuses = [forgot(client, "a@example.com",
                           environ_base={"REMOTE_ADDR": f"10.0.0.{i}"}).status_code
                    for i in range(3)]
        assert statuses == [202, 202, 429]

    def test_forgot_is_limited_per_address(self, client):
        statuses = [forgot(client, f"u{i}@example.com").status_code for i in range(5)]
        assert statuses == [202] * 4 + [429]

    def test_reset_is_limited_per_address(self, client):
        statuses = [reset(client, "x" * 43).status_code for _ in range(4)]
        assert statuses == [400, 400, 400, 429]
