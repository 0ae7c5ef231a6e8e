"""Flask's signed-cookie session, without its fixed cost on requests that use no session.

Every API call arrives without a cookie and never touches the session, yet Flask would build a
signing serializer to open it and work out the cookie's settings to save it. Here a request
without a Cookie header gets an empty session at once, and an empty, unchanged session is
never saved. Anything else (the hosted pages, the OAuth round trips) goes through Flask's own
code, so the cookies and the Vary header are what Flask would produce.
"""

from __future__ import annotations

from flask import Flask, Request, Response
from flask.sessions import SecureCookieSession, SecureCookieSessionInterface, SessionMixin

from app.web.headers import add_vary


class CookieSessionInterface(SecureCookieSessionInterface):
    def open_session(self, app: Flask, request: Request) -> SecureCookieSession | None:
        if app.secret_key and not request.environ.get("HTTP_COOKIE"):
            return self.session_class()
        return super().open_session(app, request)

    def save_session(self, app: Flask, session: SessionMixin, response: Response) -> None:
        if not session and not session.modified:  # no cookie to set and none to delete
            if session.accessed:
                add_vary(response, "Cookie")
            return
        super().save_session(app, session, response)
