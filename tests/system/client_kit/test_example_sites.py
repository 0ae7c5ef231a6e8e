"""Two example client sites, `symbols` and `footprints`, on their own ports, against one real
svc-auth server (see conftest.py): what needs a token, one account across both sites, plan
gating and `users set-plan`, and the CORS the sites' pages rely on."""

from __future__ import annotations

import json
import re
import secrets
import time
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
import pytest
import requests

from tests.support.accounts import PASSWORD
from tests.support.api import assert_problem
from tests.support.client_kit import HTTP_TIMEOUT, Kit, RunningSite
from tests.support.encoding import pkce_pair

pytestmark = pytest.mark.e2e

FIRST_ITEM = {"symbols": ("sym-resistor", "symbol"), "footprints": ("fp-0603", "footprint")}


def call(method: str, url: str, token: str | None = None, **kwargs: Any) -> requests.Response:
    headers = dict(kwargs.pop("headers", {}))
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    with requests.request(method, url, headers=headers, timeout=HTTP_TIMEOUT,
                          allow_redirects=False, **kwargs) as response:
        response.content  # noqa: B018  (read the body before the connection goes back)
        return response


def public_paths(site: RunningSite) -> list[str]:
    item, kind = FIRST_ITEM[site.name]
    return ["/api/health", f"/api/{site.items}", f"/api/{site.items}?category=passive",
            "/api/search?q=passive", "/api/search/semantic?q=small+outline",
            "/api/suggestions?q=s", f"/api/library/{item}", "/api/categories",
            f"/api/thumbnails/{item}", f"/api/download/{item}", f"/api/community?type={kind}",
            f"/api/comments/{item}", f"/api/ratings/{item}"]


def member_operations(site: RunningSite) -> list[tuple[str, str, dict[str, Any] | None]]:
    item, _ = FIRST_ITEM[site.name]
    return [("POST", "/api/generate", {"prompt": "an op-amp"}),
            ("POST", "/api/generate/save", {"name": "mine", "data": "#"}),
            ("POST", "/api/contribute/submit", {"name": "shared", "data": "#"}),
            ("GET", f"/api/my-{site.items}", None),
            ("PATCH", f"/api/my-{site.items}/x-1", {"name": "renamed"}),
            ("DELETE", f"/api/my-{site.items}/x-1", None),
            ("POST", f"/api/comments/{item}", {"text": "nice"}),
            ("POST", f"/api/ratings/{item}", {"stars": 5})]


def sign_in_through(kit: Kit, site: RunningSite, email: str) -> dict[str, Any]:
    """What the site's page does with startLogin and handleCallback, done with requests: the
    hosted login form with the site's redirect URI, state and PKCE, then exchange-code."""
    verifier, challenge = pkce_pair()
    state = secrets.token_urlsafe(16)
    query = urlencode({"redirect_uri": site.callback, "state": state,
                       "code_challenge": challenge, "code_challenge_method": "S256"})
    with requests.Session() as browser:
        with browser.get(kit.service_url(f"/login?{query}"), timeout=HTTP_TIMEOUT) as form:
            assert form.status_code == 200, form.text
            csrf = re.search(r'<input[^>]*name="csrf_token"[^>]*value="([^"]+)"', form.text)
            assert csrf, "the hosted login form has no CSRF token"
        with browser.post(kit.service_url(f"/login?{query}"), timeout=HTTP_TIMEOUT,
                          allow_redirects=False,
                          data={"csrf_token": csrf.group(1), "email": email,
                                "password": PASSWORD}) as answer:
            assert answer.status_code in (302, 303), answer.text
            location = answer.headers["Location"]
    assert location.startswith(site.callback + "?"), location
    back = {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}
    assert back["state"] == state
    exchanged = call("POST", kit.service_url("/api/v2/auth/exchange-code"),
                     headers={"Origin": site.base_url},
                     json={"code": back["code"], "provider": back["provider"],
                           "code_verifier": verifier, "redirect_uri": site.callback})
    assert exchanged.status_code == 200, exchanged.text
    assert exchanged.headers["Access-Control-Allow-Origin"] == site.base_url
    body: dict[str, Any] = exchanged.json()
    return body


def claims_of(token: str) -> dict[str, Any]:
    claims: dict[str, Any] = jwt.decode(token, options={"verify_signature": False})
    return claims


# -- what needs a token ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["symbols", "footprints"])
def test_public_operations_answer_without_a_token(kit: Kit, name: str):
    site = kit.sites[name]
    for path in public_paths(site):
        response = call("GET", site.url(path))
        assert response.status_code == 200, f"GET {path}: {response.status_code} {response.text}"
    assert call("GET", site.url("/api/health")).json() == {"status": "ok", "site": name}
    listed = call("GET", site.url(f"/api/{site.items}")).json()["items"]
    assert listed and {item["type"] for item in listed} == {FIRST_ITEM[name][1]}
    thumbnail = call("GET", site.url(f"/api/thumbnails/{FIRST_ITEM[name][0]}"))
    assert thumbnail.headers["Content-Type"].startswith("image/svg+xml")
    # The one route with a `type` parameter lists this site's kind only.
    other = "footprint" if name == "symbols" else "symbol"
    assert_problem(call("GET", site.url(f"/api/community?type={other}")), 400,
                   "invalid_request")


@pytest.mark.parametrize("name", ["symbols", "footprints"])
def test_member_operations_refuse_a_missing_or_bad_token(kit: Kit, name: str):
    site = kit.sites[name]
    for method, path, body in member_operations(site):
        missing = call(method, site.url(path), json=body)
        assert_problem(missing, 401, "missing_token")
        assert missing.headers["WWW-Authenticate"] == "Bearer", (method, path)

        forged = call(method, site.url(path), token="not.a.jwt", json=body)
        assert_problem(forged, 401, "invalid_token")
        assert forged.headers["WWW-Authenticate"].startswith("Bearer"), (method, path)

        basic = call(method, site.url(path), json=body, headers={"Authorization": "Basic eDp5"})
        assert_problem(basic, 401, "missing_token")


def test_an_expired_token_is_token_expired(kit: Kit):
    """Signed with the service's own current key, but an hour and a minute old."""
    from app.infra.keys import SigningKey

    stored = json.loads((kit.service.instance_path / "jwt-keys.json").read_text())["keys"][0]
    key = SigningKey.from_material(stored["alg"], stored["material"], stored["created_at"])
    now = int(time.time())
    expired = jwt.encode(
        {"iss": kit.service.base_url, "aud": "svc", "sub": "u", "sid": "s", "plan": "pro",
         "jti": "j", "iat": now - 3660, "nbf": now - 3660, "exp": now - 60},
        key.private, algorithm=key.alg, headers={"kid": key.kid, "typ": "at+jwt"})
    response = call("GET", kit.symbols.url("/api/my-symbols"), token=expired)
    assert_problem(response, 401, "token_expired")
    assert response.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'


# -- one account, every site ----------------------------------------------------------------------


def test_a_token_issued_through_one_site_is_accepted_by_the_other(kit: Kit):
    email = kit.create_account()
    issued = sign_in_through(kit, kit.symbols, email)
    token = issued["access_token"]
    assert issued["user"]["email"] == email

    for site in (kit.symbols, kit.footprints):
        response = call("GET", site.url(f"/api/my-{site.items}"), token=token)
        assert response.status_code == 200, response.text
        assert response.json() == {"items": []}
        commented = call("POST", site.url(f"/api/comments/{FIRST_ITEM[site.name][0]}"),
                         token=token, json={"text": f"hello from {email}"})
        assert commented.status_code == 201, commented.text
        assert commented.json()["by"] == issued["user"]["id"]

    # And the other way round, with the v1 login a site's page sends from its own origin.
    v1 = call("POST", kit.service_url("/api/v1/auth/login"), headers={"Origin":
              kit.footprints.base_url},
              json={"email": email, "password": PASSWORD, "captcha_token": ""})
    assert v1.status_code == 200, v1.text
    assert v1.headers["Access-Control-Allow-Origin"] == kit.footprints.base_url
    assert v1.json()["session"]["access_token"] == v1.json()["access_token"]
    response = call("GET", kit.symbols.url("/api/my-symbols"), token=v1.json()["access_token"])
    assert response.status_code == 200, response.text


def test_a_members_items_are_their_own(kit: Kit):
    site = kit.footprints
    owner = kit.login(kit.create_account(plan="pro"))["access_token"]
    stranger = kit.login(kit.create_account(plan="pro"))["access_token"]

    made = call("POST", site.url("/api/generate"), token=owner, json={"prompt": "a QFN-48"})
    assert made.status_code == 200, made.text
    assert made.json()["type"] == "footprint"
    saved = call("POST", site.url("/api/generate/save"), token=owner,
                 json={"name": made.json()["name"], "data": made.json()["data"]})
    assert saved.status_code == 201, saved.text
    item_id = saved.json()["id"]

    mine = call("GET", site.url("/api/my-footprints"), token=owner).json()["items"]
    assert [i["id"] for i in mine] == [item_id]
    assert call("GET", site.url("/api/my-footprints"), token=stranger).json() == {"items": []}
    assert_problem(call("PATCH", site.url(f"/api/my-footprints/{item_id}"), token=stranger,
                        json={"name": "stolen"}), 404, "not_found")
    assert_problem(call("DELETE", site.url(f"/api/my-footprints/{item_id}"), token=stranger),
                   404, "not_found")

    renamed = call("PATCH", site.url(f"/api/my-footprints/{item_id}"), token=owner,
                   json={"name": "QFN-48 (mine)"})
    assert renamed.status_code == 200 and renamed.json()["name"] == "QFN-48 (mine)"
    assert call("DELETE", site.url(f"/api/my-footprints/{item_id}"),
                token=owner).status_code == 204
    assert call("GET", site.url("/api/my-footprints"), token=owner).json() == {"items": []}

    shared = call("POST", site.url("/api/contribute/submit"), token=stranger,
                  json={"name": "TO-220", "data": "#"})
    assert shared.status_code == 201, shared.text
    community = call("GET", site.url("/api/community?type=footprint")).json()["items"]
    assert shared.json()["id"] in [i["id"] for i in community]

    assert call("POST", site.url("/api/ratings/fp-soic8"), token=owner,
                json={"stars": 4}).status_code == 200
    assert call("POST", site.url("/api/ratings/fp-soic8"), token=stranger,
                json={"stars": 2}).status_code == 200
    assert call("GET", site.url("/api/ratings/fp-soic8")).json() == {"count": 2, "average": 3.0}
    assert_problem(call("POST", site.url("/api/ratings/fp-soic8"), token=owner,
                        json={"stars": 9}), 422, "invalid_body")
    assert_problem(call("POST", site.url("/api/comments/fp-soic8"), token=owner,
                        data="text=hi"), 422, "invalid_body")


# -- plan gating ----------------------------------------------------------------------------------


def test_free_plan_gets_402_with_the_pricing_link_until_set_plan(kit: Kit):
    email = kit.create_account()
    tokens = kit.login(email)
    token = tokens["access_token"]
    assert claims_of(token)["plan"] == "free"

    for site in (kit.symbols, kit.footprints):
        refused = call("POST", site.url("/api/generate"), token=token, json={"prompt": "x"})
        body = assert_problem(refused, 402, "upgrade_required")
        assert body["pricing_url"] == site.pricing_url
        assert body["plans"] == ["pro", "team"]
        saved = call("POST", site.url("/api/generate/save"), token=token,
                     json={"name": "n", "data": "d"})
        assert_problem(saved, 402, "upgrade_required")
        # Everything else stays open to the free plan.
        assert call("POST", site.url("/api/contribute/submit"), token=token,
                    json={"name": "n", "data": "d"}).status_code == 201

    kit.cli("users", "set-plan", email, "pro")

    # The token still says "free" (a snapshot, verified offline), but a refusal is checked once
    # more with the service's /verify, so the upgrade counts at once.
    assert claims_of(token)["plan"] == "free"
    for site in (kit.symbols, kit.footprints):
        made = call("POST", site.url("/api/generate"), token=token, json={"prompt": "an LED"})
        assert made.status_code == 200, made.text
        assert made.json()["name"].endswith("an LED")

    # The next refresh carries the new plan in the token itself.
    refreshed = call("POST", kit.service_url("/api/v1/auth/refresh"),
                     json={"refresh_token": tokens["refresh_token"]})
    assert refreshed.status_code == 200, refreshed.text
    assert claims_of(refreshed.json()["access_token"])["plan"] == "pro"

    # A downgrade counts from the next token on: offline verification trusts the `plan` of a
    # token until it expires (an hour at most); a new sign-in is refused at once.
    kit.cli("users", "set-plan", email, "free")
    assert call("POST", kit.symbols.url("/api/generate"), token=refreshed.json()["access_token"],
                json={"prompt": "x"}).status_code == 200
    assert_problem(call("POST", kit.symbols.url("/api/generate"),
                        token=kit.login(email)["access_token"], json={"prompt": "x"}),
                   402, "upgrade_required")


# -- what the sites' pages need from the service --------------------------------------------------


@pytest.mark.parametrize("name", ["symbols", "footprints"])
def test_the_service_serves_the_client_to_registered_origins_only(kit: Kit, name: str):
    origin = kit.sites[name].base_url
    module = call("GET", kit.service_url("/static/svc-auth.js"), headers={"Origin": origin})
    assert module.status_code == 200
    assert module.headers["Content-Type"].startswith("text/javascript")
    assert module.headers["Access-Control-Allow-Origin"] == origin
    assert "export class SvcAuth" in module.text

    stranger = call("GET", kit.service_url("/static/svc-auth.js"),
                    headers={"Origin": "http://127.0.0.1:1"})
    assert "Access-Control-Allow-Origin" not in stranger.headers

    for path, asked in [("/api/v1/auth/login", "content-type"),
                        ("/api/v1/auth/refresh", "content-type"),
                        ("/api/v2/auth/exchange-code", "content-type"),
                        ("/api/v2/auth/logout", "authorization")]:
        preflight = call("OPTIONS", kit.service_url(path), headers={
            "Origin": origin, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": asked})
        assert preflight.status_code in (200, 204), (path, preflight.status_code)
        assert preflight.headers["Access-Control-Allow-Origin"] == origin
        assert "POST" in preflight.headers["Access-Control-Allow-Methods"]
        allowed = preflight.headers["Access-Control-Allow-Headers"].lower()
        assert asked in allowed, (path, allowed)


def test_the_sites_page_allows_the_service_script_and_nothing_else(kit: Kit):
    page = call("GET", kit.symbols.url("/"))
    assert page.status_code == 200
    csp = page.headers["Content-Security-Policy"]
    assert f"script-src 'self' {kit.service.base_url};" in csp
    assert f"connect-src 'self' {kit.service.base_url};" in csp
    assert "default-src 'none'" in csp and "'unsafe-inline'" not in csp
    assert page.headers["Referrer-Policy"] == "no-referrer"
    assert f'data-service-url="{kit.service.base_url}"' in page.text
    assert "<script>" not in page.text  # no inline script
