"""Enrolling an authenticator app through the hosted pages, and its codes at the fake clock."""

from __future__ import annotations

import re
from html import unescape

import pyotp

from tests.support.accounts import OWNED
from tests.support.pages import submit


def code_at(secret: str, clock, steps: int = 0) -> str:
    """The app's code at the fake clock's time, `steps` periods of 30 s away."""
    return pyotp.TOTP(secret).at(clock.now.timestamp() + 30 * steps)


def enrol(client, clock) -> tuple[str, list[str]]:
    """Turn on an authenticator app for the signed-in browser: its secret and the recovery
    codes. The clock moves on a step, so the next code is a fresh one."""
    assert submit(client, "/account/totp/start", {}, token_from="/account").status_code == 302
    page = client.get("/account/totp")
    secret = re.search(r'<code class="key">([A-Z2-7 ]+)</code>', page.text).group(1)
    secret = secret.replace(" ", "")
    done = submit(client, "/account/totp", {"code": code_at(secret, clock)})
    assert done.status_code == 200, done.text
    codes = [unescape(c) for c in re.findall(r"<li><code>([a-z0-9-]+)</code></li>", done.text)]
    clock.advance(30)
    return secret, codes


def enrolled_user(app, make_user, clock, email: str = "ada@example.com", **fields):
    """A user (with `fields` set; the address proved unless they say otherwise) with an
    authenticator app, enrolled from another browser."""
    account = make_user(email, **{**OWNED, **fields})
    browser = app.test_client()
    submit(browser, "/login", {"email": account.email, "password": account.password})
    secret, codes = enrol(browser, clock)
    return account, secret, codes
