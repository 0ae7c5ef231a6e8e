from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, LargeBinary, String, true
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime


class ClientSite(Model):
    """A client site registered with `flask sites add` (SVC_CLIENT_SITES holds the others): the
    handoff's redirect targets and CORS origins, and the site as an OpenID Connect client
    (`client_id` = its name)."""

    __tablename__ = "client_sites"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    redirect_uris: Mapped[list[str]] = mapped_column(JSON)
    origins: Mapped[list[str]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # None: the redirect URIs serve as post-logout redirect URIs too.
    post_logout_redirect_uris: Mapped[list[str] | None] = mapped_column(JSON)
    # A confidential client's secret, as its SHA-256 (256 random bits: no salt needed); None for
    # a public client, which must use PKCE.
    client_secret_hash: Mapped[str | None] = mapped_column(String(64))
    token_endpoint_auth_method: Mapped[str] = mapped_column(String(32), default="none",
                                                            server_default="none")
    # None: the default scopes (openid email profile).
    scopes: Mapped[list[str] | None] = mapped_column(JSON)
    first_party: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    # How the site shows on our pages (domain/clients/branding.py): all optional.
    display_name: Mapped[str | None] = mapped_column(String(80))
    accent_color: Mapped[str | None] = mapped_column(String(7))
    logo: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True)  # checked, served by us
    logo_type: Mapped[str | None] = mapped_column(String(32))
    home_url: Mapped[str | None] = mapped_column(String(2048))
    privacy_url: Mapped[str | None] = mapped_column(String(2048))
    terms_url: Mapped[str | None] = mapped_column(String(2048))
    # Events to the site (app/domain/clients/webhooks.py): where its webhooks go, and its
    # signing secret sealed under the service's key (the database alone never shows it); after
    # a rotation the previous one, which signs too until `webhook_previous_until`.
    webhook_url: Mapped[str | None] = mapped_column(String(2048))
    webhook_secret_sealed: Mapped[bytes | None] = mapped_column(LargeBinary)
    webhook_previous_sealed: Mapped[bytes | None] = mapped_column(LargeBinary)
    webhook_previous_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # OpenID Connect Back-Channel Logout 1.0: where a logout token goes when a session ends.
    backchannel_logout_uri: Mapped[str | None] = mapped_column(String(2048))
    # Whether its sign-ins may use a code mailed to the address (SVC_EMAIL_CODE_SIGN_IN too).
    email_code_sign_in: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())


class SiteRegistryMark(Model):
    """One row whose mark changes with every change of a registered site, in the same
    transaction: a worker's copy of the sites' origins is current while the mark is the one it
    was read with (app/domain/clients/origins.py)."""

    __tablename__ = "site_registry_mark"

    id: Mapped[int] = mapped_column(primary_key=True)  # always 1
    mark: Mapped[str] = mapped_column(String(32))
