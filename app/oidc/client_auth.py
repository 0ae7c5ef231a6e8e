"""What an invalid_client answer says (RFC 6749 §5.2): how the client it names is registered to
authenticate, and what to send instead, so that a library's first misconfiguration is fixed from
the message alone. It is the same whatever secret was sent: it never tells a right secret sent the
wrong way, or one close to the right one, from any other."""

from __future__ import annotations

from collections.abc import Collection
from typing import cast

from authlib.oauth2 import OAuth2Request
from authlib.oauth2.rfc6749.util import extract_basic_authorization

from app.domain.clients.sites import PUBLIC
from app.oidc.clients import Client, params_of, query_client

BASIC, POST = "client_secret_basic", "client_secret_post"
# What each registered method asks a client to send (ASCII without quotes or backslashes: RFC
# 6749's error_description, and authlib's WWW-Authenticate header, take nothing else).
SEND = {
    BASIC: "This client authenticates with client_secret_basic: send client_id and "
           "client_secret in an HTTP Basic Authorization header, not in the form body.",
    POST: "This client authenticates with client_secret_post: send client_id and "
          "client_secret in the form body, not in an Authorization header.",
    PUBLIC: "This is a public client (token_endpoint_auth_method none): send client_id in "
            "the form body and no secret.",
}
NO_CLIENT = ("The request names no client: send client_id, with the client secret the way the "
             "client is registered for (client_secret_basic or client_secret_post), or none for "
             "a public client.")
UNKNOWN = "No client is registered with this client_id."
NOT_THE_CLIENTS = "This client authenticates with {method}, as this request did, but the " \
                  "client_id and secret sent are not the client's."
CONFIDENTIAL_ONLY = "This is a public client (token_endpoint_auth_method none), and this " \
                    "request is for confidential clients only."
SERVICE_CLIENT = "A service client authenticates at the token endpoint only, with " \
                     "client_credentials."


def tried(request: OAuth2Request) -> tuple[str | None, str | None]:
    """The client_id the request names and the method it tried: an Authorization header's
    (Basic), else the form's client_id, with client_secret or without."""
    try:
        # werkzeug's Headers, which authlib reads as the dict its types say
        basic_id, _ = extract_basic_authorization(cast(dict[str, str], request.headers))
    except ValueError:  # not UTF-8: Server.authenticate_client answers that first
        basic_id = None
    if basic_id:
        return basic_id, BASIC
    data = params_of(request).data
    client_id = data.get("client_id") or None
    if client_id is None:
        return None, None
    return client_id, POST if data.get("client_secret") else PUBLIC


def description(request: OAuth2Request, methods: Collection[str], endpoint: str) -> str:
    """Why the client the request names could not authenticate here."""
    client_id, method = tried(request)
    if client_id is None:
        return NO_CLIENT
    client = query_client(client_id)
    if client is None:
        return UNKNOWN
    return _for(client, method, methods, endpoint)


def _for(client: Client, method: str | None, methods: Collection[str], endpoint: str) -> str:
    registered = client.site.auth_method
    if client.service and endpoint != "token":
        return SERVICE_CLIENT
    if registered not in methods or (endpoint == "introspection" and client.site.is_public):
        return CONFIDENTIAL_ONLY
    if method == registered and registered != PUBLIC:
        return NOT_THE_CLIENTS.format(method=registered)
    return SEND[registered]
