"""An example client site of svc-auth: `symbols` or `footprints`.

It serves the operations of interface section 4.3 with their token requirements, from stub data
kept in memory: public GETs need nothing; the rest need a valid access token, verified offline
with the service's published keys (svc_auth_client); generation also needs the `pro` or `team`
plan. Its page signs people in with the service's own browser client, /static/svc-auth.js,
imported from the service's origin.

    python examples/client_site/app.py symbols --port 8001 --service-url http://127.0.0.1:5000
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import threading
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, Response, abort, current_app, jsonify, render_template, request
from werkzeug.exceptions import HTTPException

try:
    import svc_auth_client as auth
except ModuleNotFoundError:  # run from a checkout: use the helper that lives next door
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))
    import svc_auth_client as auth

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # oidc_mode.py, next door, when run as a script or imported
import oidc_mode  # noqa: E402

GENERATION_PLANS = ("pro", "team")
SITES = {"symbols": "symbol", "footprints": "footprint"}  # site name -> the kind of item it has

# Stub catalogues: (id, name, category, description).
CATALOGUE = {
    "symbols": [
        ("sym-resistor", "Resistor", "passive", "Two-terminal resistor, IEC style"),
        ("sym-capacitor", "Capacitor", "passive", "Non-polarised capacitor"),
        ("sym-led", "LED", "optoelectronics", "Light-emitting diode"),
        ("sym-npn", "NPN transistor", "discrete", "Bipolar junction transistor, NPN"),
        ("sym-opamp", "Op-amp", "analog", "Operational amplifier, single"),
        ("sym-mcu", "Microcontroller", "digital", "Generic 32-pin microcontroller"),
    ],
    "footprints": [
        ("fp-0603", "0603", "passive", "Chip resistor or capacitor, 1.6 x 0.8 mm"),
        ("fp-0805", "0805", "passive", "Chip resistor or capacitor, 2.0 x 1.25 mm"),
        ("fp-sot23", "SOT-23", "discrete", "Small-outline transistor, 3 leads"),
        ("fp-soic8", "SOIC-8", "analog", "Small-outline IC, 8 leads, 1.27 mm pitch"),
        ("fp-qfn32", "QFN-32", "digital", "Quad flat no-lead, 32 pads, 5 x 5 mm"),
        ("fp-led5", "LED 5 mm", "optoelectronics", "Through-hole LED, 5 mm"),
    ],
}


class Store:
    """What the people of this site made, said and rated: in memory, lost on restart."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.mine: dict[str, dict[str, dict[str, Any]]] = {}  # user id -> item id -> item
        self.comments: dict[str, list[dict[str, Any]]] = {}  # item id -> comments
        self.ratings: dict[str, dict[str, int]] = {}  # item id -> user id -> stars
        self.submissions: list[dict[str, Any]] = []
        # user id -> what the webhooks said of the account (name, plan, disabled...), each
        # value from the newest event that set it; a deleted account's keeps only that.
        self.profiles: dict[str, auth.AccountState] = {}
        self.ids = itertools.count(1)

    def forget(self, user_id: str) -> None:
        """Everything of a deleted account (call with the lock held)."""
        self.mine.pop(user_id, None)
        for item_id, said in self.comments.items():
            self.comments[item_id] = [c for c in said if c["by"] != user_id]
        for stars in self.ratings.values():
            stars.pop(user_id, None)
        self.submissions = [s for s in self.submissions if s["by"] != user_id]


def create_app(site: str | None = None, service_url: str | None = None,
               pricing_url: str | None = None, *, audience: str | None = None,
               brand: str | None = None, verifier: auth.TokenVerifier | None = None,
               captcha_script: str | None = None, webhook_secret: str | None = None) -> Flask:
    """The site. Arguments left out come from the environment: CLIENT_SITE (symbols or
    footprints), SERVICE_URL, PRICING_URL (default /pricing), SERVICE_AUDIENCE (default svc),
    BRAND (default svc). For the captcha the service asks for after failed sign-ins, the page's
    CSP lets in CAPTCHA_PROVIDER's origins (turnstile, hcaptcha or recaptcha), or the origin of
    CAPTCHA_SCRIPT_URL (the widget's script, when it is not the provider's); with neither, the
    widget cannot load and the person signs in through the service's hosted login. With
    WEBHOOK_SECRET (the whsec_... `flask sites set-webhook` printed), the service's account
    events arrive at /webhooks/svc-auth."""
    site = site or os.environ.get("CLIENT_SITE", "symbols")
    if site not in SITES:
        raise ValueError(f"site must be one of {sorted(SITES)}, not {site!r}")
    service_url = (service_url or os.environ.get("SERVICE_URL", "http://127.0.0.1:5000"))
    service_url = service_url.rstrip("/")
    pricing_url = pricing_url or os.environ.get("PRICING_URL", "/pricing")
    audience = audience or os.environ.get("SERVICE_AUDIENCE", "svc")

    app = Flask(f"client_site_{site}", root_path=str(HERE))
    app.config.update(SITE=site, KIND=SITES[site], SERVICE_URL=service_url,
                      PRICING_URL=pricing_url, BRAND=brand or os.environ.get("BRAND", "svc"),
                      CAPTCHA_SCRIPT_URL=captcha_script or os.environ.get("CAPTCHA_SCRIPT_URL"),
                      CAPTCHA_PROVIDER=os.environ.get("CAPTCHA_PROVIDER"))
    app.extensions["client_site_store"] = Store()
    verifier = verifier or auth.TokenVerifier(f"{service_url}/.well-known/jwks.json",
                                              issuer=service_url, audience=audience)
    auth.init_app(app, verifier, pricing_url=pricing_url,
                  plan_check_url=f"{service_url}/api/v2/auth/verify")
    # The second way in: standard OpenID Connect with authlib's client (oidc_mode.py).
    app.secret_key = os.environ.get("SITE_SECRET_KEY") or os.urandom(32)
    oidc_mode.register(app, service_url, os.environ.get("OIDC_CLIENT_ID", site),
                       os.environ.get("OIDC_CLIENT_SECRET"))
    _register_pages(app)
    secret = webhook_secret or os.environ.get("WEBHOOK_SECRET")
    if secret:
        _register_webhooks(app, secret)
    _register_public_api(app)
    _register_member_api(app)
    app.register_error_handler(HTTPException, _http_error)
    app.after_request(_headers)
    return app


def _store() -> Store:
    store: Store = current_app.extensions["client_site_store"]
    return store


def _config(name: str) -> Any:
    return current_app.config[name]


# -- pages ------------------------------------------------------------------------------------

def _register_pages(app: Flask) -> None:
    def page(template: str, name: str) -> str:
        return render_template(template, page=name, site=_config("SITE"), kind=_config("KIND"),
                               service_url=_config("SERVICE_URL"), brand=_config("BRAND"),
                               pricing_url=_config("PRICING_URL"),
                               captcha_script=_config("CAPTCHA_SCRIPT_URL") or "",
                               redirect_uri=request.host_url + "auth/callback")

    app.add_url_rule("/", "home", lambda: page("index.html", "home"))
    app.add_url_rule("/auth/callback", "callback", lambda: page("callback.html", "callback"))
    app.add_url_rule("/pricing", "pricing", lambda: page("pricing.html", "pricing"))


# Each captcha provider's origins (its documented CSP), for the widget the service may ask for.
CAPTCHA_ORIGINS = {
    "turnstile": "https://challenges.cloudflare.com",
    "hcaptcha": "https://hcaptcha.com https://*.hcaptcha.com",
    "recaptcha": "https://www.google.com/recaptcha/ https://www.gstatic.com/recaptcha/",
}


def _origin(url: str) -> str:
    return "{0.scheme}://{0.netloc}".format(urlsplit(url))


def _headers(response: Response) -> Response:
    service_origin = _origin(_config("SERVICE_URL"))
    script = _config("CAPTCHA_SCRIPT_URL")
    captcha = (_origin(script) if script
               else CAPTCHA_ORIGINS.get(_config("CAPTCHA_PROVIDER") or "", ""))
    widget = f" {captcha}" if captcha else ""
    # The page's only scripts: its own, the service's client (a module from the service), and
    # the captcha widget (when one is configured).
    response.headers.setdefault("Content-Security-Policy", (
        f"default-src 'none'; script-src 'self' {service_origin}{widget}; "
        f"connect-src 'self' {service_origin}{widget}; "
        + (f"frame-src {captcha}; " if captcha else "")
        + "style-src 'self'; img-src 'self'; "
        "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"))
    response.headers.setdefault("Referrer-Policy", "no-referrer")  # the callback URL has a code
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    if response.mimetype == "text/html":
        response.headers.setdefault("Cache-Control", "no-store")
    return response


def _http_error(error: HTTPException) -> Response | HTTPException:
    if not request.path.startswith("/api/"):
        return error
    status = error.code or 500
    code = {400: "invalid_request", 404: "not_found", 405: "method_not_allowed",
            422: "invalid_body"}.get(status, "error")
    return auth.problem(status, code, error.description or "")


# -- account events from the service (webhooks) ---------------------------------------------

def _register_webhooks(app: Flask, secret: str) -> None:
    @app.post("/webhooks/svc-auth")
    def account_events() -> tuple[str, int]:
        event = auth.verified_event(secret)  # 400 unless the service signed this body
        user_id, store = event["data"]["user_id"], _store()
        with store.lock:
            # Events may come in any order: only a newer one changes what is shown.
            newer = store.profiles.setdefault(user_id, auth.AccountState()).apply(event)
            if newer.get("deleted"):
                store.forget(user_id)
        return "", 204  # a retry, an older event or one with nothing for us: no harm


# -- public operations -----------------------------------------------------------------------

def _items() -> list[dict[str, Any]]:
    return [{"id": i, "name": n, "category": c, "description": d, "type": _config("KIND"),
             "thumbnail": f"/api/thumbnails/{i}", "download": f"/api/download/{i}"}
            for i, n, c, d in CATALOGUE[_config("SITE")]]


def _item(item_id: str) -> dict[str, Any]:
    found = next((item for item in _items() if item["id"] == item_id), None)
    if found is None:
        abort(404, f"No {_config('KIND')} {item_id!r}.")
    return found


def _matching(query: str, items: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    words = query.lower().split()
    return [item for item in items
            if all(w in f"{item['name']} {item['description']} {item['category']}".lower()
                   for w in words)]


def _register_public_api(app: Flask) -> None:
    items = app.config["SITE"]  # "symbols" or "footprints"

    @app.get("/api/health")
    def health() -> Response:
        return jsonify(status="ok", site=_config("SITE"))

    @app.get(f"/api/{items}")
    def browse() -> Response:
        category = request.args.get("category")
        found = [i for i in _items() if category in (None, i["category"])]
        return jsonify(items=found, total=len(found))

    @app.get("/api/search")
    def search() -> Response:
        return jsonify(items=_matching(request.args.get("q", ""), _items()))

    @app.get("/api/search/semantic")
    def semantic_search() -> Response:
        # A stand-in for embeddings: rank by how many query words the text shares.
        words = set(request.args.get("q", "").lower().split())
        scored = [(len(words & set(f"{i['name']} {i['description']}".lower().split())), i)
                  for i in _items()]
        ranked = [dict(item, score=score) for score, item in sorted(
            scored, key=lambda pair: -pair[0]) if score]
        return jsonify(items=ranked)

    @app.get("/api/suggestions")
    def suggestions() -> Response:
        prefix = request.args.get("q", "").lower()
        return jsonify(suggestions=[i["name"] for i in _items()
                                    if i["name"].lower().startswith(prefix)][:5])

    @app.get("/api/library/<item_id>")
    def detail(item_id: str) -> Response:
        return jsonify(_item(item_id))

    @app.get("/api/categories")
    def categories() -> Response:
        return jsonify(categories=sorted({i["category"] for i in _items()}))

    @app.get("/api/thumbnails/<item_id>")
    def thumbnail(item_id: str) -> Response:
        name = _item(item_id)["name"]
        svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="96" height="64">'
               '<rect x="1" y="1" width="94" height="62" fill="none" stroke="black"/>'
               f'<text x="48" y="36" text-anchor="middle" font-size="10">{_xml(name)}</text>'
               "</svg>")
        return Response(svg, mimetype="image/svg+xml")

    @app.get("/api/download/<item_id>")
    def download(item_id: str) -> Response:
        item = _item(item_id)
        body = f"# {item['type']} {item['name']}\n# {item['description']}\n"
        return Response(body, mimetype="text/plain", headers={
            "Content-Disposition": f'attachment; filename="{item_id}.txt"'})

    @app.get("/api/community")
    def community() -> Response:
        kind = request.args.get("type", _config("KIND"))
        if kind != _config("KIND"):
            abort(400, f"This site lists type={_config('KIND')} only.")
        with _store().lock:
            shared = [dict(s) for s in _store().submissions]
        return jsonify(items=shared)

    @app.get("/api/comments/<item_id>")
    def comments(item_id: str) -> Response:
        _item(item_id)
        with _store().lock:
            return jsonify(comments=list(_store().comments.get(item_id, [])))

    @app.get("/api/ratings/<item_id>")
    def ratings(item_id: str) -> Response:
        _item(item_id)
        with _store().lock:
            stars = list(_store().ratings.get(item_id, {}).values())
        average = round(sum(stars) / len(stars), 2) if stars else None
        return jsonify(count=len(stars), average=average)


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# -- operations that need a token -------------------------------------------------------------

def _body(**fields: type) -> dict[str, Any]:
    """The JSON body, with each named field present and of its type; 422 otherwise."""
    untrusted = request.get_json(silent=True)
    if not isinstance(untrusted, dict):
        abort(422, "Send a JSON object.")
    for name, kind in fields.items():
        value = untrusted.get(name)
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
            abort(422, f"{name} must be a {kind.__name__}.")
        if isinstance(value, str) and not 0 < len(value) <= 2000:
            abort(422, f"{name} must be 1 to 2000 characters.")
    return untrusted


def _user_id() -> str:
    return str(auth.current_claims()["sub"])


def _register_member_api(app: Flask) -> None:
    items = app.config["SITE"]  # "symbols" or "footprints"

    @app.post("/api/generate")
    @auth.require_plan(*GENERATION_PLANS)
    def generate() -> Response:
        prompt = _body(prompt=str)["prompt"]
        name = f"Generated {_config('KIND')}: {prompt[:60]}"
        return jsonify(id=f"gen-{uuid.uuid4().hex[:12]}", name=name, type=_config("KIND"),
                       data=f"# {name}\n")

    @app.post("/api/generate/save")
    @auth.require_plan(*GENERATION_PLANS)
    def save_generated() -> tuple[Response, int]:
        body = _body(name=str, data=str)
        return jsonify(_add_mine(body["name"], body["data"], "generated")), 201

    @app.post("/api/contribute/submit")
    @auth.require_token
    def contribute() -> tuple[Response, int]:
        body = _body(name=str, data=str)
        submission = {"name": body["name"], "type": _config("KIND"), "by": _user_id()}
        with _store().lock:
            submission["id"] = f"sub-{next(_store().ids)}"
            _store().submissions.append(submission)
        return jsonify(submission), 201

    @app.get(f"/api/my-{items}")
    @auth.require_token
    def my_items() -> Response:
        with _store().lock:
            mine = [dict(i) for i in _store().mine.get(_user_id(), {}).values()]
        return jsonify(items=mine)

    @app.patch(f"/api/my-{items}/<item_id>")
    @auth.require_token
    def rename_mine(item_id: str) -> Response:
        name = _body(name=str)["name"]
        with _store().lock:
            item = _store().mine.get(_user_id(), {}).get(item_id)
            if item is None:
                abort(404, f"You have no {_config('KIND')} {item_id!r}.")
            item["name"] = name
            return jsonify(item)

    @app.delete(f"/api/my-{items}/<item_id>")
    @auth.require_token
    def delete_mine(item_id: str) -> tuple[str, int]:
        with _store().lock:
            if _store().mine.get(_user_id(), {}).pop(item_id, None) is None:
                abort(404, f"You have no {_config('KIND')} {item_id!r}.")
        return "", 204

    @app.post("/api/comments/<item_id>")
    @auth.require_token
    def comment(item_id: str) -> tuple[Response, int]:
        _item(item_id)
        entry = {"by": _user_id(), "text": _body(text=str)["text"]}
        with _store().lock:
            _store().comments.setdefault(item_id, []).append(entry)
        return jsonify(entry), 201

    @app.post("/api/ratings/<item_id>")
    @auth.require_token
    def rate(item_id: str) -> Response:
        _item(item_id)
        stars = _body(stars=int)["stars"]
        if not 1 <= stars <= 5:
            abort(422, "stars must be 1 to 5.")
        with _store().lock:
            _store().ratings.setdefault(item_id, {})[_user_id()] = stars
        return jsonify(stars=stars)


def _add_mine(name: str, data: str, origin: str) -> dict[str, Any]:
    with _store().lock:
        item = {"id": f"{_config('KIND')[:3]}-{next(_store().ids)}", "name": name,
                "type": _config("KIND"), "origin": origin, "data": data}
        _store().mine.setdefault(_user_id(), {})[item["id"]] = item
        return dict(item)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", nargs="?", default=os.environ.get("CLIENT_SITE", "symbols"),
                        choices=sorted(SITES))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8001")))
    parser.add_argument("--service-url", default=os.environ.get("SERVICE_URL"))
    parser.add_argument("--pricing-url", default=os.environ.get("PRICING_URL"))
    args = parser.parse_args(argv)
    create_app(args.site, args.service_url, args.pricing_url).run(host="127.0.0.1",
                                                                   port=args.port)


if __name__ == "__main__":
    main()
