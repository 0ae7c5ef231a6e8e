"""The registered sites as authlib's clients: how it reads a client's redirect URIs, scopes,
secret, authentication method and grants from the registry (domain/clients/sites.py)."""

from __future__ import annotations

from authlib.oauth2 import OAuth2Request
from authlib.oauth2.rfc6749 import (
    scope_to_list,
)
from authlib.oauth2.rfc6749.requests import OAuth2Payload

from app.domain.clients import service_clients, sites
from app.domain.clients.sites import Site

SECRET_METHODS = list(sites.SECRET_METHODS)
TOKEN_AUTH_METHODS = [*SECRET_METHODS, sites.PUBLIC]
class Client:
    """A registered site, or a service client, as authlib's ClientMixin sees it. A service
    client is seen as a confidential third-party site with no redirect URI, that may only get
    a token for itself at the token endpoint."""

    def __init__(self, site: Site, *, service: bool = False, registration: str = "") -> None:
        self.site = site
        self.service = service
        self.registration = registration  # a service client's (service_clients.Service)
        self.client_id = site.client_id
        self.client_metadata = {"post_logout_redirect_uris": list(site.post_logout_redirect_uris)}

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return None  # every request names its redirect URI

    def get_allowed_scope(self, scope: str | None) -> str | None:
        """The scope asked for, if the client may have all of it; None (invalid_scope) if not.
        No scope at all asks for the client's default. A site may always ask for
        offline_access; a service client, which gets no refresh token, may not."""
        asked = scope_to_list(scope) if scope else list(self.site.allowed_scopes)
        allowed = {*self.site.allowed_scopes, *(() if self.service else (sites.OFFLINE_ACCESS,))}
        if not asked or not set(asked) <= allowed:
            return None
        return " ".join(dict.fromkeys(asked))

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri in self.site.redirect_uris

    def check_client_secret(self, client_secret: str) -> bool:
        return self.site.check_secret(client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        if self.service:
            return endpoint == "token" and method == self.site.auth_method
        if endpoint == "introspection":  # confidential clients only
            return not self.site.is_public and method == self.site.auth_method
        return method == self.site.auth_method

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code" and not self.service

    def check_grant_type(self, grant_type: str) -> bool:
        if self.service:
            return grant_type == "client_credentials"
        if grant_type == "client_credentials":
            return not self.site.is_public
        return grant_type in ("authorization_code", "refresh_token")


def query_client(client_id: str | None) -> Client | None:
    site = sites.registered_site(client_id)
    if site is not None:
        return Client(site)
    service = service_clients.find(client_id)
    if service is None:
        return None
    return Client(Site(service.name, (), (), client_secret_hash=service.secret_hash,
                       auth_method=service_clients.AUTH_METHOD, allowed_scopes=service.scopes,
                       first_party=False), service=True, registration=service.registration)


def client_of(request: OAuth2Request) -> Client:
    """The client authlib found for a request: one of query_client's."""
    assert isinstance(request.client, Client)
    return request.client


def params_of(request: OAuth2Request) -> OAuth2Payload:
    """A request's parameters, which authlib's requests (and Pushed) carry from the start."""
    assert request.payload is not None
    return request.payload
