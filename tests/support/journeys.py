"""The first thing an operator tries on a new deployment, through its address alone (urllib):
sign up, sign in, verify the access token, refresh, verify again. A clean install's test
(tests/system/e2e/test_runtime_install.py) and the image's (tests/system/image) run the same one."""

from __future__ import annotations

from tests.support.accounts import PASSWORD
from tests.support.http import bearer, call


def sign_up_in_verify_and_refresh(base_url: str, email: str) -> dict[str, str]:
    """Each step's answer asserted; the tokens of the refresh."""
    status, signed_up = call("POST", base_url + "/api/v2/auth/signup",
                             {"email": email, "password": PASSWORD, "full_name": "Ada"})
    assert status == 201, signed_up
    status, logged_in = call("POST", base_url + "/api/v2/auth/login",
                             {"email": email, "password": PASSWORD})
    assert status == 200, logged_in
    status, verified = call("GET", base_url + "/api/v2/auth/verify",
                            headers=bearer(logged_in["access_token"]))
    assert status == 200 and verified["user"]["email"] == email, verified
    status, refreshed = call("POST", base_url + "/api/v2/auth/refresh",
                             {"refresh_token": logged_in["refresh_token"]})
    assert status == 200 and refreshed["refresh_token"] != logged_in["refresh_token"], refreshed
    status, again = call("GET", base_url + "/api/v2/auth/verify",
                         headers=bearer(refreshed["access_token"]))
    assert status == 200 and again["session_id"] == verified["session_id"], again
    return refreshed
