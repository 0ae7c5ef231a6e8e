"""Pushed authorization requests (RFC 9126): the parameters a client pushed, read as authlib
reads a query, and the authorization request at the authorization endpoint, pushed or not."""

from __future__ import annotations

import json
from collections.abc import Mapping

from authlib.integrations.flask_oauth2.requests import FlaskOAuth2Request
from authlib.oauth2 import OAuth2Request
from authlib.oauth2.rfc6749 import (
    InvalidRequestError,
)
from authlib.oauth2.rfc6749.requests import OAuth2Payload
from flask import request as flask_request

from app.domain.oidc import pushed_requests
from app.oidc.clients import (
    Client,
)


class _Params(OAuth2Payload):
    """Parameters as authlib reads them, from a mapping of one value each."""

    def __init__(self, params: Mapping[str, str]) -> None:
        self._params = dict(params)

    @property
    def data(self) -> dict[str, str]:
        return self._params

    @property
    def datalist(self) -> dict[str, list[str]]:
        return {name: [value] for name, value in self._params.items()}


class Pushed(OAuth2Request):
    """An authorization request whose parameters a client pushed (or is pushing): authlib
    validates them as it would a query."""

    def __init__(self, params: Mapping[str, str], request_uri: str | None) -> None:
        # werkzeug's Headers, as authlib's Flask request passes them (typed as no Mapping).
        super().__init__(flask_request.method, flask_request.url,
                         headers=flask_request.headers)  # type: ignore[call-overload]
        self.payload = _Params(params)
        self.request_uri = request_uri


def authorization_request() -> OAuth2Request:
    """The authorization request at the authorization endpoint: the browser's query, or, when
    it names the request_uri of a push, the parameters its client pushed, and those alone (RFC
    9126 §4). InvalidRequestUri when that is not a live one of the client_id beside it."""
    untrusted_request_uri = flask_request.args.get("request_uri")
    if untrusted_request_uri is None or not untrusted_request_uri.startswith(
            pushed_requests.PREFIX):  # a request object's, refused as unsupported
        return FlaskOAuth2Request(flask_request)
    params = pushed_requests.params_of(untrusted_request_uri, flask_request.args.get("client_id"))
    return Pushed(params, untrusted_request_uri)


def pushed_params(client: Client) -> dict[str, str]:
    """The authorization request in a push's form body, for the client that sent it."""
    form = flask_request.form
    if any(len(form.getlist(name)) > 1 for name in form):
        raise InvalidRequestError("A parameter is given more than once.")
    if "request_uri" in form:  # RFC 9126 §2.1
        raise InvalidRequestError("A pushed request carries its parameters, not a request_uri.")
    if form.get("client_id", client.client_id) != client.client_id:
        raise InvalidRequestError("client_id is not the authenticated client.")
    params = {name: value for name, value in form.items() if name != "client_secret"}
    params["client_id"] = client.client_id
    if len(json.dumps(params)) > pushed_requests.MAX_PARAMS:
        raise InvalidRequestError("The authorization request is too long.")
    return params
