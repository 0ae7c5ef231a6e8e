"""Our own small scripts on the hosted pages (the show-password buttons, the recovery codes' copy
button, the times said in the browser's zone: app/pages/times.py): a template asks for one with
`own_script(name)` where it needs it, and gets its tag once a page. Such a page's policy then
lets scripts from our origin run (script-src 'self'); they call nothing back, so no connect-src.
A page that asks for none keeps the policy with no script.
Every page works without them: what they drive is rendered hidden until they run (a time is
said in UTC until then)."""

from __future__ import annotations

from flask import Response, g, url_for
from markupsafe import Markup

from app.pages.blueprint import bp
from app.web.headers import CONTENT_SECURITY_POLICY, with_own_script

SCRIPTS = ("show-password.js", "copy-codes.js", "local-times.js")
POLICY = "Content-Security-Policy"


def own_script(name: str) -> Markup:
    """The script's tag, the first time a page asks for it; nothing after."""
    if name not in SCRIPTS:
        raise ValueError(f"{name} is not one of our page scripts")
    loaded: set[str] = g.setdefault("svc_own_scripts", set())
    if name in loaded:
        return Markup("")
    loaded.add(name)
    return Markup('<script src="{}" defer></script>').format(url_for("static", filename=name))


bp.add_app_template_global(own_script, "own_script")


@bp.after_app_request
def _allow_own_scripts(response: Response) -> Response:
    # Any page's (the blueprint's or another's): the policy follows what the page loads.
    if g.get("svc_own_scripts") and response.mimetype == "text/html":
        policy = response.headers.get(POLICY, CONTENT_SECURITY_POLICY)
        response.headers[POLICY] = with_own_script({POLICY: policy}, calls_back=False)[POLICY]
    return response
