"""CORS: registered origins only, never a reflection of whatever Origin was sent."""

import pytest

pytestmark = pytest.mark.app_settings("oauth")


def test_a_registered_origin_is_allowed(client):
    response = client.get("/api/v2/auth/verify", headers={"Origin": "https://symbols.example"})
    assert response.headers["Access-Control-Allow-Origin"] == "https://symbols.example"
    assert "Origin" in response.headers["Vary"]
    assert "Access-Control-Allow-Credentials" not in response.headers


def test_a_preflight_allows_the_bearer_header(client):
    response = client.options("/api/v2/auth/refresh", headers={
        "Origin": "https://symbols.example", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type"})
    assert response.status_code == 200
    assert "Authorization" in response.headers["Access-Control-Allow-Headers"]
    assert "POST" in response.headers["Access-Control-Allow-Methods"]


@pytest.mark.parametrize("origin", ["https://evil.example", "https://symbols.example.evil.example",
                                    "http://symbols.example", "null", "https://symbols.example/"])
def test_other_origins_get_no_cors_headers(client, origin):
    response = client.get("/api/v2/auth/verify", headers={"Origin": origin})
    assert "Access-Control-Allow-Origin" not in response.headers


def test_pages_outside_the_api_get_no_cors_headers(client):
    response = client.get("/health", headers={"Origin": "https://symbols.example"})
    assert "Access-Control-Allow-Origin" not in response.headers


def test_sites_added_with_the_cli_are_allowed(app, client):
    runner = app.test_cli_runner()
    result = runner.invoke(args=["sites", "add", "footprints", "--redirect-uri",
                                 "https://footprints.example/cb", "--origin",
                                 "https://footprints.example"])
    assert result.exit_code == 0, result.output
    response = client.get("/api/v2/auth/verify", headers={"Origin": "https://footprints.example"})
    assert response.headers["Access-Control-Allow-Origin"] == "https://footprints.example"


@pytest.mark.parametrize(("args", "message"), [
    (["sites", "add", "Bad Name", "--redirect-uri", "https://x.example/cb"], "lower-case"),
    (["sites", "add", "x", "--redirect-uri", "http://x.example/cb"], "https"),
    (["sites", "add", "x", "--redirect-uri", "https://x.example/cb", "--origin",
      "https://x.example/path"], "origin"),
    (["sites", "add", "symbols", "--redirect-uri", "https://x.example/cb"], "SVC_CLIENT_SITES"),
])
def test_the_cli_refuses_bad_sites(app, args, message):
    result = app.test_cli_runner().invoke(args=args)
    assert result.exit_code != 0 and message in result.output


def test_sites_list_shows_both_sources(app):
    app.test_cli_runner().invoke(args=["sites", "add", "footprints", "--redirect-uri",
                                       "https://footprints.example/cb"])
    output = app.test_cli_runner().invoke(args=["sites", "list"]).output
    assert "symbols (SVC_CLIENT_SITES)" in output and "footprints" in output
    assert "https://footprints.example/cb" in output
