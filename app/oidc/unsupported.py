"""What an authorization request may ask that the provider does not do, refused with the error
OpenID Connect Core §3.1.2.6 names rather than ignored (a client that asked for a request object
or a response mode would otherwise read an answer it did not ask for): request objects by value
(`request`) or by reference (a `request_uri` that is not a pushed request's), and any
`response_mode` but query. The error goes back to the redirect URI once it is the client's
(RFC 6749 §4.1.2.1); otherwise the person sees a page."""

from __future__ import annotations

from authlib.oauth2 import OAuth2Request
from authlib.oauth2.rfc6749 import InvalidRequestError, OAuth2Error
from authlib.oidc.core.errors import RequestNotSupportedError, RequestURINotSupportedError

from app.oidc.clients import params_of, query_client

RESPONSE_MODES = ("query",)
REQUEST_OBJECT = ("Request objects (the request parameter) are not supported: send the "
                  "authorization request's parameters themselves, or push them to the "
                  "pushed_authorization_request_endpoint.")
REQUEST_OBJECT_URI = ("A request_uri is supported only as the "
                      "pushed_authorization_request_endpoint answers it "
                      "(urn:ietf:params:oauth:request_uri:...); request objects by reference "
                      "are not.")
RESPONSE_MODE = "The only response_mode supported is query (the default): leave it out."


def refuse(request: OAuth2Request) -> None:
    """The refusal of what the request asks that is not supported, if it asks any. The
    request_uri of a pushed request is no parameter of the request it names (app/oidc/pushed.py);
    an empty parameter is one left out (RFC 6749 §3.1), each of a repeated one is read."""
    sent = params_of(request).datalist
    error: OAuth2Error | None = None
    if any(sent.get("request", ())):
        error = RequestNotSupportedError(REQUEST_OBJECT)
    elif any(sent.get("request_uri", ())):
        error = RequestURINotSupportedError(REQUEST_OBJECT_URI)
    elif any(mode and mode not in RESPONSE_MODES for mode in sent.get("response_mode", ())):
        error = InvalidRequestError(RESPONSE_MODE)
    if error is not None:
        error.redirect_uri = checked_redirect_uri(request)
        raise error


def checked_redirect_uri(request: OAuth2Request) -> str | None:
    """The request's redirect URI if it is one its client registered: where its errors may go."""
    payload = params_of(request)
    client = query_client(payload.client_id)
    untrusted_redirect_uri = payload.redirect_uri
    if client is None or not untrusted_redirect_uri \
            or not client.check_redirect_uri(untrusted_redirect_uri):
        return None
    return str(untrusted_redirect_uri)
