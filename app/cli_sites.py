"""`flask sites ...`: the client sites people are sent back to, and how each shows on our
pages. `add` refuses a name that exists; `update` changes only what it is given."""

from __future__ import annotations

from collections.abc import Callable
from typing import IO, Any

import click
from flask.cli import AppGroup

from app.cli_support import friendly_errors
from app.domain.clients import registration, sites, webhooks
from app.domain.clients.registration import Changes, Looks, Registration
from app.domain.clients.sites import Site

sites_cli = AppGroup("sites", help="Manage the client sites people are sent back to.")


BACKCHANNEL = click.option(
    "--backchannel-logout-uri", default=None,
    help="Where a logout token goes when a session of this client ends (OpenID Connect "
         "Back-Channel Logout).")


def _looks_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """How the site shows on our pages (each optional)."""
    for option in reversed((
        click.option("--display-name", help="The site's name as people read it."),
        click.option("--logo", type=click.File("rb"),
                     help="A PNG, WebP or SVG file (checked; served from our own origin)."),
        click.option("--accent-color", help="#rrggbb; must keep text readable (4.5:1)."),
        click.option("--home-url", help="The site's home page (the way back)."),
        click.option("--privacy-url", help="Its privacy policy (shown on consent)."),
        click.option("--terms-url", help="Its terms (shown on consent)."),
    )):
        command = option(command)
    return command


def _looks(options: dict[str, Any]) -> Looks:
    logo: IO[bytes] | None = options.pop("logo")
    return Looks(logo=logo.read() if logo else None, **options)


@sites_cli.command("add", short_help="Register a new site.")
@click.argument("name")
@click.option("--redirect-uri", "redirect_uris", multiple=True, required=True,
              help="An exact redirect URI; repeat for several. The first is v1's callback target.")
@click.option("--origin", "origins", multiple=True, help="A CORS origin; repeat for several.")
@click.option("--post-logout-redirect-uri", "post_logout_uris", multiple=True,
              help="Where OpenID Connect logout may send people back; repeat for several "
                   "(default: the redirect URIs).")
@click.option("--confidential", type=click.Choice(sites.SECRET_METHODS), default=None,
              help="A confidential client authenticating with this method; its secret is "
                   "shown once (default: a public client, PKCE required).")
@click.option("--scope", "scopes", multiple=True, type=click.Choice(sites.SUPPORTED_SCOPES),
              help="A scope the client may ask for; repeat (default: openid email profile).")
@click.option("--third-party", is_flag=True, help="Not one of the family's own sites.")
@click.option("--no-email-code", "no_email_code", is_flag=True,
              help="Its sign-ins do not offer a code mailed to the address.")
@BACKCHANNEL
@_looks_options
@friendly_errors
def add_site(name: str, redirect_uris: tuple[str, ...], origins: tuple[str, ...],
             post_logout_uris: tuple[str, ...], confidential: str | None,
             scopes: tuple[str, ...], third_party: bool, no_email_code: bool,
             backchannel_logout_uri: str | None, **looks: Any) -> None:
    """Register a new site (a name that exists is refused: see `sites update`)."""
    added = registration.add_site(name, list(redirect_uris), list(origins), Registration(
        post_logout_redirect_uris=list(post_logout_uris) or None,
        auth_method=confidential or sites.PUBLIC, scopes=list(scopes) or None,
        first_party=not third_party, looks=_looks(looks),
        backchannel_logout_uri=backchannel_logout_uri, email_code_sign_in=not no_email_code))
    click.echo(f"Registered {added.site.name}: {', '.join(added.site.redirect_uris)}")
    _echo_secret(added.client_secret)


@sites_cli.command("update", short_help="Change what is given of a site.")
@click.argument("name")
@click.option("--redirect-uri", "redirect_uris", multiple=True,
              help="Replaces the redirect URIs; repeat for several.")
@click.option("--origin", "origins", multiple=True, help="Replaces the CORS origins.")
@click.option("--post-logout-redirect-uri", "post_logout_uris", multiple=True,
              help="Replaces the post-logout redirect URIs.")
@click.option("--confidential", type=click.Choice(sites.SECRET_METHODS), default=None,
              help="Make it (or keep it) a confidential client with this method.")
@click.option("--public", is_flag=True, help="Make it a public client (its secret goes).")
@click.option("--scope", "scopes", multiple=True, type=click.Choice(sites.SUPPORTED_SCOPES),
              help="Replaces the scopes it may ask for.")
@click.option("--third-party/--first-party", default=None, help="Change which it is.")
@click.option("--email-code/--no-email-code", "email_code", default=None,
              help="Whether its sign-ins offer a code mailed to the address.")
@BACKCHANNEL
@_looks_options
@friendly_errors
def update_site(name: str, redirect_uris: tuple[str, ...], origins: tuple[str, ...],
                post_logout_uris: tuple[str, ...], confidential: str | None, public: bool,
                scopes: tuple[str, ...], third_party: bool | None, email_code: bool | None,
                backchannel_logout_uri: str | None, **looks: Any) -> None:
    """Change what is given; everything else stays as it is."""
    updated = registration.update_site(name, Changes(
        list(redirect_uris) or None, list(origins) or None, list(post_logout_uris) or None,
        sites.PUBLIC if public else confidential, list(scopes) or None,
        None if third_party is None else not third_party, _looks(looks),
        backchannel_logout_uri, email_code))
    click.echo(f"Updated {updated.site.name}.")
    _echo_secret(updated.client_secret)


def _echo_secret(secret: str | None) -> None:
    if secret is not None:
        click.echo(f"client_secret {secret}\n"
                   "It is shown this once; `sites rotate-secret` makes a new one.")


@sites_cli.command("rotate-secret", short_help="A new secret for a confidential client.")
@click.argument("name")
@friendly_errors
def rotate_site_secret(name: str) -> None:
    """A new secret for a confidential client; the old one stops at once."""
    click.echo(f"client_secret {registration.rotate_secret(name)}\n"
               "The old secret no longer works; this one is shown this once.")


@sites_cli.command("set-webhook", short_help="Send the site's events to URL.")
@click.argument("name")
@click.argument("url")
@friendly_errors
def set_webhook(name: str, url: str) -> None:
    """Send the site's events to URL, signed with a new secret (shown once)."""
    click.echo(f"webhook_secret {webhooks.set_webhook(name, url)}\n"
               "It is shown this once; `sites rotate-webhook-secret` makes a new one.")


@sites_cli.command("rotate-webhook-secret", short_help="A new webhook secret.")
@click.argument("name")
@friendly_errors
def rotate_webhook_secret(name: str) -> None:
    """A new webhook secret; deliveries are signed with the old one too for a day."""
    click.echo(f"webhook_secret {webhooks.rotate_secret(name)}\n"
               "Deliveries carry a signature by the old secret too for a day; this one is "
               "shown this once.")


@sites_cli.command("remove-webhook")
@click.argument("name")
@friendly_errors
def remove_webhook(name: str) -> None:
    """Stop sending the site's events."""
    webhooks.remove_webhook(name)
    click.echo(f"{name} gets no more webhooks.")


@sites_cli.command("list")
def list_sites() -> None:
    """Every site, with its URIs."""
    for site in sorted(sites.all_sites().values(), key=lambda s: s.name):
        _show(site)


@sites_cli.command("show", short_help="One site, never its secret.")
@click.argument("name")
def show_site(name: str) -> None:
    """One site: what it is, its URIs and how it shows on our pages (never its secret)."""
    site = sites.registered_site(name)
    if site is None:
        raise click.ClickException(f"No site is called {name}.")
    _show(site, looks=True)


def _show(site: Site, *, looks: bool = False) -> None:
    source = " (SVC_CLIENT_SITES)" if site.from_settings else ""
    kind = "public" if site.is_public else f"confidential, {site.auth_method}"
    party = "first-party" if site.first_party else "third-party"
    click.echo(f"{site.name}{source}: {kind}, {party}, scopes {' '.join(site.allowed_scopes)}"
               + ("" if site.email_code_sign_in else ", no email codes"))
    for uri in site.redirect_uris:
        click.echo(f"  redirect_uri {uri}")
    for origin in site.origins:
        click.echo(f"  origin       {origin}")
    for uri in site.post_logout_uris or ():
        click.echo(f"  post_logout  {uri}")
    if site.webhook_url:
        click.echo(f"  webhook      {site.webhook_url}")
    if site.backchannel_logout_uri:
        click.echo(f"  backchannel  {site.backchannel_logout_uri}")
    if looks:
        for label, value in (("display name", site.branding.display_name),
                             ("accent color", site.branding.accent_color),
                             ("logo", site.branding.logo_type),
                             ("home", site.branding.home_url),
                             ("privacy", site.branding.privacy_url),
                             ("terms", site.branding.terms_url)):
            if value:
                click.echo(f"  {label:<12} {value}")


@sites_cli.command("remove", short_help="Remove a site added with `sites add`.")
@click.argument("name")
def remove_site(name: str) -> None:
    """Remove a site added with `sites add`: its redirect URIs stop at once."""
    if not registration.remove_site(name):
        raise click.ClickException(f"No site called {name} was added with `sites add`.")
    click.echo(f"Removed {name}.")
