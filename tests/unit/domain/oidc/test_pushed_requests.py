"""Pushed authorization requests (RFC 9126, issue 15 item 2): a client posts its authorization
request to /oauth2/par, authenticated, and the browser carries only client_id and request_uri.
Through the test client; tests/system/e2e/test_oidc_relying_parties.py has openid-client doing
it."""

from __future__ import annotations

import json
import re
import threading
from urllib.parse import urlencode

import jwt
import pytest
from sqlalchemy import func, select

from app.db.transactions import writes
from app.domain.oidc import pushed_requests
from app.domain.oidc.errors import InvalidRequestUri, TooManyPushedRequests
from app.domain.tokens import tokens
from app.extensions import db
from app.models import HandoffCode, PushedRequest
from tests.support.oidc import (
    CONFIDENTIAL,
    CONFIDENTIAL_URI,
    PUBLIC,
    PUBLIC_URI,
    SECRET,
    SITES,
    authorize_query,
    client_post,
    pkce,
    query_of,
    redeem,
    sign_in_through,
)
from tests.support.pages import submit

pytestmark = pytest.mark.app_settings("oidc")


def push(client, data, auth=None):
    return client_post(client, "/oauth2/par", data, auth)


def pushed_uri(client, data, auth=None) -> str:
    response = push(client, data, auth)
    assert response.status_code == 201, response.text
    assert response.headers["Cache-Control"] == "no-store"
    body = response.get_json()
    assert body["expires_in"] == 600
    assert body["request_uri"].startswith("urn:ietf:params:oauth:request_uri:")
    return str(body["request_uri"])


def authorize(client, request_uri, client_id=PUBLIC, **extra):
    return client.get("/oauth2/authorize?" + urlencode(
        {"client_id": client_id, "request_uri": request_uri, **extra}))


def stored(app) -> int:
    with app.app_context():
        return db.session.scalar(select(func.count()).select_from(PushedRequest))


def assert_refused_page(response):
    assert response.status_code == 400, response.text
    assert "Location" not in response.headers and response.mimetype == "text/html"


def test_a_public_client_pushes_its_request_and_the_browser_carries_only_its_handle(app, client,
                                                                                    user):
    verifier = pkce()
    request_uri = pushed_uri(client, authorize_query(verifier=verifier, nonce="pushed-nonce",
                                                     state="pushed-state"))
    signed = sign_in_through(client, authorize(client, request_uri), user)
    assert signed.status_code == 302
    back = query_of(signed.headers["Location"])
    assert signed.headers["Location"].startswith(PUBLIC_URI + "?")
    assert back["state"] == "pushed-state"
    tokens = redeem(client, back["code"], verifier)
    assert tokens.status_code == 200, tokens.text
    claims = jwt.decode(tokens.get_json()["id_token"], options={"verify_signature": False})
    assert claims["nonce"] == "pushed-nonce" and claims["aud"] == PUBLIC


def test_a_confidential_client_pushes_with_basic_authentication(client, user):
    submit(client, "/login", {"email": user.email, "password": user.password})
    query = authorize_query(client_id=CONFIDENTIAL, redirect_uri=CONFIDENTIAL_URI)
    del query["client_id"]  # RFC 9126 §2.1: Basic authentication names the client
    request_uri = pushed_uri(client, query, auth=(CONFIDENTIAL, SECRET))
    answered = authorize(client, request_uri, client_id=CONFIDENTIAL)
    assert answered.headers["Location"].startswith(CONFIDENTIAL_URI + "?")
    code = query_of(answered.headers["Location"])["code"]
    tokens = redeem(client, code, None, client_id=CONFIDENTIAL, redirect_uri=CONFIDENTIAL_URI,
                    auth=(CONFIDENTIAL, SECRET))
    assert tokens.status_code == 200, tokens.text


def test_parameters_beside_the_request_uri_are_ignored(client, user):
    """Only the pushed parameters count (RFC 9126 §4): a redirect_uri, state, scope or PKCE
    challenge added to the browser's URL on the way changes nothing."""
    submit(client, "/login", {"email": user.email, "password": user.password})
    verifier, swapped = pkce(), pkce()
    request_uri = pushed_uri(client, authorize_query(verifier=verifier, scope="openid"))
    answered = authorize(client, request_uri, redirect_uri="https://evil.example/cb",
                         state="evil", scope="openid email profile", response_type="token",
                         code_challenge=swapped.challenge, code_challenge_method="S256")
    assert answered.headers["Location"].startswith(PUBLIC_URI + "?")
    back = query_of(answered.headers["Location"])
    assert back["state"] == "st-1"
    assert redeem(client, back["code"], swapped).status_code == 400  # burns it
    back = query_of(authorize(client, pushed_uri(client, authorize_query(
        verifier=verifier, scope="openid")), scope="openid email").headers["Location"])
    tokens = redeem(client, back["code"], verifier)
    assert tokens.status_code == 200 and tokens.get_json()["scope"] == "openid"


def test_a_tab_that_lost_the_race_gets_a_page_and_no_code(app, client, user, monkeypatch):
    """Two tabs read one pushed request; the other spends it before this one issues its code."""
    submit(client, "/login", {"email": user.email, "password": user.password})
    request_uri = pushed_uri(client, authorize_query(verifier=pkce()))
    read = pushed_requests.params_of

    def read_then_lose_the_race(untrusted_request_uri, client_id):
        params = read(untrusted_request_uri, client_id)
        writes(pushed_requests.spend)(untrusted_request_uri)  # the other tab's code
        return params

    monkeypatch.setattr(pushed_requests, "params_of", read_then_lose_the_race)
    assert_refused_page(authorize(client, request_uri))
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(HandoffCode)) == 0


def test_a_dead_request_uri_leaves_no_sign_in_waiting_for_it(client, user, clock):
    request_uri = pushed_uri(client, authorize_query(verifier=pkce()))
    assert authorize(client, request_uri).headers["Location"].startswith("/login")
    clock.advance(600)
    assert_refused_page(authorize(client, request_uri))
    signed = submit(client, "/login", {"email": user.email, "password": user.password})
    assert signed.headers["Location"] == "/account"  # not back to the dead request


def test_a_request_uri_gives_one_code_at_most(client, app, user):
    submit(client, "/login", {"email": user.email, "password": user.password})
    request_uri = pushed_uri(client, authorize_query(verifier=pkce()))
    assert "code" in query_of(authorize(client, request_uri).headers["Location"])
    assert_refused_page(authorize(client, request_uri))
    other_tab = app.test_client()  # another browser of the same person, or a stranger's
    submit(other_tab, "/login", {"email": user.email, "password": user.password})
    assert_refused_page(authorize(other_tab, request_uri))


def test_two_tabs_racing_with_one_request_uri_get_one_code(app):
    """Both may read the pushed request before either issues its code; the spend decides."""
    spend = writes(pushed_requests.spend)
    with app.app_context():
        request_uri = pushed_requests.push(PUBLIC, authorize_query(), None)
        assert pushed_requests.params_of(request_uri, PUBLIC)["state"] == "st-1"
        spend(request_uri)
        with pytest.raises(InvalidRequestUri):
            spend(request_uri)
        with pytest.raises(InvalidRequestUri):
            pushed_requests.params_of(request_uri, PUBLIC)


def test_a_request_uri_works_for_its_own_client_only(client, user):
    submit(client, "/login", {"email": user.email, "password": user.password})
    request_uri = pushed_uri(client, authorize_query(verifier=pkce()))
    assert_refused_page(authorize(client, request_uri, client_id=CONFIDENTIAL))
    assert_refused_page(client.get("/oauth2/authorize?" + urlencode({"request_uri": request_uri})))
    # Refusals spend nothing: its own client still gets its code.
    assert "code" in query_of(authorize(client, request_uri).headers["Location"])


def test_a_request_uri_expires_after_ten_minutes(client, user, clock):
    request_uri = pushed_uri(client, authorize_query(verifier=pkce()))
    clock.advance(599)
    assert authorize(client, request_uri).headers["Location"].startswith("/login")
    clock.advance(1)
    assert_refused_page(authorize(client, request_uri))  # not sent to sign in for nothing
    submit(client, "/login", {"email": user.email, "password": user.password})
    assert_refused_page(authorize(client, request_uri))


@pytest.mark.parametrize("untrusted_request_uri", [
    "", "urn:ietf:params:oauth:request_uri:", "urn:ietf:params:oauth:request_uri:made-up",
    "https://notes.example/request.jwt", "urn:ietf:params:oauth:request_uri:\x00", "%ff",
])
def test_an_unknown_request_uri_gets_a_page_and_no_redirect(client, user, untrusted_request_uri):
    submit(client, "/login", {"email": user.email, "password": user.password})
    assert_refused_page(authorize(client, untrusted_request_uri))


def test_the_request_uri_is_stored_hashed(app, client):
    request_uri = pushed_uri(client, authorize_query(verifier=pkce()))
    handle = request_uri.removeprefix(pushed_requests.PREFIX)
    with app.app_context():
        row = db.session.scalars(select(PushedRequest)).one()
        assert handle not in row.handle_hash and handle not in row.params
        assert row.client_id == PUBLIC and json.loads(row.params)["state"] == "st-1"


def test_a_pushed_prompt_none_when_signed_out_answers_login_required(client):
    request_uri = pushed_uri(client, authorize_query(verifier=pkce(), prompt="none"))
    answered = authorize(client, request_uri)
    assert answered.headers["Location"].startswith(PUBLIC_URI + "?")
    assert query_of(answered.headers["Location"])["error"] == "login_required"


def test_a_third_party_client_asks_consent_with_its_pushed_request(client, user):
    submit(client, "/login", {"email": user.email, "password": user.password})
    request_uri = pushed_uri(client, authorize_query(
        verifier=pkce(), client_id="outsider", redirect_uri="https://outsider.example/cb"))
    page = authorize(client, request_uri, client_id="outsider")
    assert page.status_code == 200 and "outsider" in page.text
    action = re.search(r'<form id="consent" method="post" action="([^"]+)"', page.text).group(1)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    allowed = client.post(action.replace("&amp;", "&"),
                          data={"decision": "allow", "csrf_token": token})
    assert allowed.headers["Location"].startswith("https://outsider.example/cb?")
    assert "code" in query_of(allowed.headers["Location"])


# What the push itself refuses: RFC 6749 JSON, never a redirect, nothing kept ---------------------

@pytest.mark.parametrize(("data", "auth", "status", "error"), [
    # Client authentication as at the token endpoint.
    ({"client_id": CONFIDENTIAL}, None, 401, "invalid_client"),
    ({}, (CONFIDENTIAL, "wrong secret"), 401, "invalid_client"),
    ({"client_id": "nobody"}, None, 400, "invalid_client"),
    ({"client_id": PUBLIC, "client_secret": "guess"}, None, 401, "invalid_client"),
    # The request, as the authorization endpoint would refuse it.
    ({"redirect_uri": "https://evil.example/cb"}, None, 400, "invalid_request"),
    ({"code_challenge": None}, None, 400, "invalid_request"),  # a public client needs PKCE
    ({"response_type": "token"}, None, 400, "unsupported_response_type"),
    ({"scope": "openid admin"}, None, 400, "invalid_scope"),
    ({"nonce": "n" * 256}, None, 400, "invalid_request"),
    ({"max_age": "soon"}, None, 400, "invalid_request"),
    ({"max_age": "\u00b2"}, None, 400, "invalid_request"),  # isdigit() says yes: was a 500
    ({"scope": None, "nonce": "a\x00b"}, None, 400, "invalid_request"),  # default scope: was kept
    ({"scope": None, "nonce": "n" * 256}, None, 400, "invalid_request"),
    ({"prompt": "none login"}, None, 400, "invalid_request"),
    # What only a push can get wrong.
    ({"request_uri": "urn:ietf:params:oauth:request_uri:x"}, None, 400, "invalid_request"),
    ({"request": "eyJhbGciOiJub25lIn0.e30."}, None, 400, "request_not_supported"),
    ({"response_mode": "form_post"}, None, 400, "invalid_request"),
    ({"state": "x" * 9000}, None, 400, "invalid_request"),
])
def test_a_push_is_refused_like_an_authorization_request(app, client, data, auth, status,
                                                         error):
    form = authorize_query(verifier=pkce()) | {k: v for k, v in data.items() if v is not None}
    for name in [k for k, v in data.items() if v is None]:
        del form[name]
    if auth is not None:
        form = authorize_query(client_id=CONFIDENTIAL, redirect_uri=CONFIDENTIAL_URI) | data
        del form["client_id"]
    response = push(client, form, auth)
    assert (response.status_code, response.get_json()["error"]) == (status, error), \
        response.text
    assert "Location" not in response.headers
    assert response.headers["Cache-Control"] == "no-store"
    assert stored(app) == 0


def test_a_body_over_the_limit_is_a_413_in_oauths_json(client):
    for path in ("/oauth2/par", "/oauth2/token"):
        response = client.post(path, data={"client_id": PUBLIC, "state": "x" * 70_000})
        assert response.status_code == 413, (path, response.text)
        assert response.get_json()["error"] == "invalid_request"


def test_a_push_names_one_client_and_each_parameter_once(app, client):
    body = authorize_query(client_id=CONFIDENTIAL, redirect_uri=CONFIDENTIAL_URI)
    body["client_id"] = PUBLIC  # authenticated as ledger, asking for notes
    assert push(client, body, auth=(CONFIDENTIAL, SECRET)).get_json()["error"] == \
        "invalid_request"
    twice = urlencode([*authorize_query(verifier=pkce()).items(),
                       ("redirect_uri", "https://evil.example/cb")])
    response = client.post("/oauth2/par", data=twice,
                           content_type="application/x-www-form-urlencoded")
    assert (response.status_code, response.get_json()["error"]) == (400, "invalid_request")
    assert stored(app) == 0


POSTING = "poster"
POSTING_SITES = {**SITES, POSTING: {
    "redirect_uris": ["https://poster.example/cb"], "origins": [],
    "client_secret_sha256": tokens.hash_secret(SECRET),
    "token_endpoint_auth_method": "client_secret_post"}}


@pytest.mark.parametrize("settings", [{"CLIENT_SITES": POSTING_SITES}])
def test_a_client_secret_post_push_keeps_no_secret(app, client, user, settings):
    """client_secret_post: the secret is the client's authentication, not a parameter."""
    submit(client, "/login", {"email": user.email, "password": user.password})
    request_uri = pushed_uri(client, authorize_query(
        client_id=POSTING, redirect_uri="https://poster.example/cb") | {"client_secret": SECRET})
    with app.app_context():
        row = db.session.scalars(select(PushedRequest)).one()
        assert "client_secret" not in json.loads(row.params) and SECRET not in row.params
    answered = authorize(client, request_uri, client_id=POSTING)
    assert "code" in query_of(answered.headers["Location"])
    wrong = push(client, authorize_query(client_id=POSTING, redirect_uri="https://poster.example/cb")
                 | {"client_secret": "wrong"})
    assert (wrong.status_code, wrong.get_json()["error"]) == (401, "invalid_client")


# What waits is capped, and an expired request does not wait for `purge` (issue 21, finding 6) --

def pushed(app) -> list[tuple[str, str | None]]:
    """The stored pushed requests: (client_id, address), oldest first."""
    with app.app_context():
        return [(row.client_id, row.address) for row in db.session.scalars(
            select(PushedRequest).order_by(PushedRequest.created_at))]


def push_from(client, address, client_id=PUBLIC, redirect_uri=PUBLIC_URI):
    form = authorize_query(client_id=client_id, redirect_uri=redirect_uri, verifier=pkce())
    return client.post("/oauth2/par", data=form, environ_base={"REMOTE_ADDR": address})


def push_confidential(client, address="127.0.0.1"):
    form = authorize_query(client_id=CONFIDENTIAL, redirect_uri=CONFIDENTIAL_URI)
    del form["client_id"]
    return client.post("/oauth2/par", data=form, auth=(CONFIDENTIAL, SECRET),
                       environ_base={"REMOTE_ADDR": address})


def assert_too_many(response, retry_after):
    """RFC 9126 §2.3's 429, with the rate limit's body; Retry-After: until the first one that
    waits expires."""
    assert response.status_code == 429, response.text
    assert response.get_json() == {"error": "slow_down"}
    assert response.headers["Retry-After"] == str(retry_after)
    assert response.headers["Cache-Control"] == "no-store"


class TestCaps:
    @pytest.fixture
    def settings(self):
        return {"CLIENT_SITES": {**SITES, "jotter": {"redirect_uris": ["https://jotter.example/cb"],
                                                     "origins": []}},
                "PUSHED_REQUESTS_PER_CLIENT": 3, "PUSHED_REQUESTS_PER_ADDRESS": 2}

    def test_a_client_may_have_so_many_requests_waiting(self, app, client, clock):
        """Per client, from anywhere: a confidential client's server pushes for all its users
        from one address, so its cap is its own. An expired request frees its place."""
        for _ in range(3):
            assert push_confidential(client).status_code == 201
            clock.advance(100)
        assert_too_many(push_confidential(client), 600 - 300)
        assert len(pushed(app)) == 3  # nothing kept
        clock.advance(300)
        assert push_confidential(client).status_code == 201
        assert len(pushed(app)) == 3  # the expired one is gone
        assert_too_many(push_confidential(client), 100)

    def test_a_used_request_waits_no_more(self, app, client, user):
        request_uris = [pushed_uri(client, authorize_query(verifier=pkce()))]
        for address in ("203.0.113.1", "203.0.113.2"):
            assert push_from(client, address).status_code == 201
        assert_too_many(push_from(client, "203.0.113.3"), 600)
        submit(client, "/login", {"email": user.email, "password": user.password})
        assert "code" in query_of(authorize(client, request_uris[0]).headers["Location"])
        assert push_from(client, "203.0.113.3").status_code == 201

    def test_a_public_clients_pushes_are_capped_per_address_too(self, app, client):
        """Anyone may push as a public client: per address (an IPv6 one by its /64), whichever
        public client it names; other addresses, and a confidential client, are not held up."""
        jotter = ("jotter", "https://jotter.example/cb")
        assert push_from(client, "203.0.113.7").status_code == 201
        assert push_from(client, "203.0.113.7", *jotter).status_code == 201
        assert_too_many(push_from(client, "203.0.113.7"), 600)  # notes has only one
        assert push_from(client, "198.51.100.1").status_code == 201
        assert push_from(client, "2001:db8:1:2::1", *jotter).status_code == 201
        assert push_from(client, "2001:db8:1:2::2", *jotter).status_code == 201
        assert_too_many(push_from(client, "2001:db8:1:2::3"), 600)  # notes has two
        assert push_from(client, "2001:db8:1:3::1").status_code == 201  # another /64
        assert push_confidential(client, "203.0.113.7").status_code == 201
        assert sorted(pushed(app), key=str) == sorted([
            (PUBLIC, "203.0.113.7"), ("jotter", "203.0.113.7"), (PUBLIC, "198.51.100.1"),
            ("jotter", "2001:db8:1:2::/64"), ("jotter", "2001:db8:1:2::/64"),
            (PUBLIC, "2001:db8:1:3::/64"), (CONFIDENTIAL, None)], key=str)

    def test_concurrent_pushes_do_not_go_past_the_cap(self, app, monkeypatch):
        """The count and the insert hold the client's lock: a push that counts while another
        is between its count and its commit waits for it (one waits for the other for a
        second at most, then goes on)."""
        counted, other_done = threading.Event(), threading.Event()
        check = pushed_requests._check_cap

        def check_then_let_the_other_in(whose, setting, at):
            check(whose, setting, at)
            if threading.current_thread().name == "first" and not counted.is_set():
                counted.set()
                other_done.wait(timeout=1)  # without the lock the other commits meanwhile

        monkeypatch.setattr(pushed_requests, "_check_cap", check_then_let_the_other_in)
        with app.app_context():
            for _ in range(2):
                pushed_requests.push(CONFIDENTIAL, authorize_query(), None)
        answers: dict[str, str] = {}

        def push_as(name):
            if name == "second":
                counted.wait(timeout=10)
            with app.app_context():
                try:
                    pushed_requests.push(CONFIDENTIAL, authorize_query(), None)
                    answers[name] = "kept"
                except TooManyPushedRequests:
                    answers[name] = "refused"
            if name == "second":
                other_done.set()

        threads = [threading.Thread(target=push_as, args=(name,), name=name)
                   for name in ("first", "second")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert answers == {"first": "kept", "second": "refused"}
        assert len(pushed(app)) == 3


def test_a_push_deletes_its_clients_expired_requests(app, client, user, clock):
    """Without `flask purge`: spent or not, an expired request goes with the next push of its
    client; another client's stays until its own next push."""
    submit(client, "/login", {"email": user.email, "password": user.password})
    spent = pushed_uri(client, authorize_query(verifier=pkce()))
    assert "code" in query_of(authorize(client, spent).headers["Location"])
    pushed_uri(client, authorize_query(verifier=pkce()))
    assert push_confidential(client).status_code == 201
    clock.advance(599)
    pushed_uri(client, authorize_query(verifier=pkce()))
    assert len(pushed(app)) == 4  # none expired yet
    clock.advance(1)
    pushed_uri(client, authorize_query(verifier=pkce()))
    assert pushed(app) == [(CONFIDENTIAL, None), (PUBLIC, "127.0.0.1"), (PUBLIC, "127.0.0.1")]
    clock.advance(600)
    assert push_confidential(client).status_code == 201
    assert pushed(app) == [(PUBLIC, "127.0.0.1"), (PUBLIC, "127.0.0.1"), (CONFIDENTIAL, None)]


def test_the_default_caps(app):
    assert app.config["PUSHED_REQUESTS_PER_CLIENT"] == 1000
    assert app.config["PUSHED_REQUESTS_PER_ADDRESS"] == 50
