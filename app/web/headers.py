"""Headers every response carries, added in one pass: they are on the path of every request.

(Werkzeug's `Headers.setdefault` scans the header list twice per name, and `response.vary`
parses and rewrites the header on every change; together they cost more than the view of a
cached bearer call.)
"""

from __future__ import annotations

from flask import Response

# No script, no inline style, nothing from another origin; never framed.
CONTENT_SECURITY_POLICY = ("default-src 'none'; style-src 'self'; img-src 'self'; "
                           "frame-ancestors 'none'; base-uri 'none'; object-src 'none'")

SECURITY_HEADERS = (
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Content-Security-Policy", CONTENT_SECURITY_POLICY),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("Strict-Transport-Security", "max-age=31536000; includeSubDomains"),
)


def with_own_script(headers: dict[str, str], *, calls_back: bool = True) -> dict[str, str]:
    """`headers` for a page that loads our own script: 'self' added to script-src, and to
    connect-src when the script calls back to us (passkeys, static/passkeys.js), of whatever
    policy the page has (today's, or the captcha widget's)."""
    directives = headers.get("Content-Security-Policy", CONTENT_SECURITY_POLICY).split("; ")
    missing = ["script-src", "connect-src"] if calls_back else ["script-src"]
    for index, directive in enumerate(directives):
        name, _, sources = directive.partition(" ")
        if name in missing:
            if "'self'" not in sources.split():
                directives[index] = f"{name} 'self' {sources}".strip()
            missing.remove(name)
    return {**headers, "Content-Security-Policy": "; ".join(directives + [
        f"{name} 'self'" for name in missing])}


# The API reference (/api/docs, app/api/reference.py): Swagger UI's script and ours, from this
# origin; its calls to us (the document, and the requests a developer tries out); the icons its
# stylesheet draws as data: images. Nothing from another origin, no inline script, no eval.
API_REFERENCE_POLICY = ("default-src 'none'; script-src 'self'; connect-src 'self'; "
                        "style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; "
                        "base-uri 'none'; object-src 'none'")


def add_security_headers(response: Response) -> Response:
    """The security headers, unless the view chose its own; no-store on every HTML page
    (forms with CSRF tokens, personal data)."""
    headers = response.headers
    present = {name.lower() for name, _ in headers.items()}
    for name, value in SECURITY_HEADERS:
        if name.lower() not in present:
            headers.add(name, value)
    if "cache-control" not in present and response.mimetype == "text/html":
        headers.add("Cache-Control", "no-store")
    return response


def add_vary(response: Response, field: str) -> None:
    """Add `field` to the response's Vary header, once."""
    current = next((value for name, value in response.headers.items() if name.lower() == "vary"),
                   None)  # (Headers.get on a missing name builds and catches an HTTP error)
    if not current:
        response.headers["Vary"] = field
    elif field.lower() not in {name.strip().lower() for name in current.split(",")}:
        response.headers["Vary"] = f"{current}, {field}"
