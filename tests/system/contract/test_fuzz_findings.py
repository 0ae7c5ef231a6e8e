"""What the contract fuzzers found, each reduced to a few requests and kept as a regression test.

A finding the service still has is marked `xfail(strict=True, reason="BUG: ...")`: once it is
fixed the test passes, strict turns that into a failure, and the marker goes. (None is open.)
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from flask import Flask

from app.domain.services import services
from app.domain.tokens.errors import InvalidToken
from app.web.converters import RESERVED
from tests.support.contract import SITE_REDIRECT_URI

METADATA_PATHS = ["/health", "/health/ready", "/.well-known/jwks.json",
                  "/.well-known/openid-configuration"]


@pytest.mark.parametrize("path", METADATA_PATHS)
def test_a_wrong_method_on_a_documented_path_is_a_405_problem_with_allow(contract_app: Flask,
                                                                         path: str) -> None:
    """Found by test_fuzz_api (problem_details_for_4xx, unsupported_method): `TRACE /health`
    was the HTML error page, without `Allow`. Fixed in a9fc772."""
    response = contract_app.test_client().open(path, method="TRACE")
    assert response.status_code == 405
    assert response.mimetype == "application/problem+json", response.mimetype
    assert response.get_json()["code"] == "method_not_allowed"
    assert "GET" in response.headers.get("Allow", ""), response.headers


def _documented_statuses(contract_app: Flask, path: str) -> list[str]:
    document = contract_app.test_client().get("/api/openapi.json").get_json()
    return sorted(document["paths"][path]["get"]["responses"])


START = ("/api/v2/auth/{provider}", {"redirect_uri": SITE_REDIRECT_URI})
CALLBACK = ("/api/v2/auth/{provider}/callback", {"state": "s", "code": "c"})


@pytest.mark.parametrize(("template", "query", "name"), [
    *(pytest.param(*START, name, id=f"start-{name}") for name in RESERVED),
    *(pytest.param(*CALLBACK, name, id=f"callback-{name}") for name in RESERVED),
])
def test_a_provider_named_like_one_of_our_endpoints_gets_a_documented_status(
        contract_app: Flask, template: str, query: dict[str, str], name: str) -> None:
    """Found by test_fuzz_api (status_code_conformance, SVC_FUZZ_SEED=2 SVC_FUZZ_EXAMPLES=500):
    `GET /api/v2/auth/signup` is the signup endpoint's 405, which the provider start did not
    document; the start now documents 401 and 405 (a9fc772). The callback had the same overlap
    (`GET /api/v2/auth/providers/callback` is the unlink endpoint's 405), documented in
    936d6fb."""
    response = contract_app.test_client().get(template.format(provider=name),
                                              query_string=query)
    documented = _documented_statuses(contract_app, template)
    assert str(response.status_code) in documented, (response.status_code, documented)


@pytest.mark.parametrize("token", ["\ud800", "eyJ\udc80.e30.c2ln"])
def test_access_token_verify_refuses_a_lone_surrogate_as_invalid(contract_app: Flask,
                                                                  token: str) -> None:
    """Found by test_fuzz_parsing: AccessTokens.verify raised UnicodeEncodeError (PyJWT encodes
    the token as UTF-8 first), where it promises InvalidToken or TokenExpired and nothing else.
    Fixed in a9fc772."""
    with contract_app.app_context(), pytest.raises(InvalidToken):
        services().access_tokens.verify(token, datetime.now(UTC))
