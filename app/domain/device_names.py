"""A readable name for the device behind a user agent: the account's session list, and mails."""

from __future__ import annotations

from flask_babel import gettext as _

_BROWSERS = (("Edg/", "Edge"), ("Firefox/", "Firefox"), ("Chrome/", "Chrome"),
             ("Chromium/", "Chromium"), ("Safari/", "Safari"))
_SYSTEMS = (("Android", "Android"), ("iPhone", "iPhone"), ("iPad", "iPad"),
            ("Windows", "Windows"), ("Mac OS X", "macOS"), ("Linux", "Linux"))


def describe(user_agent: str | None) -> str:
    if not user_agent:
        return str(_("Unknown device"))
    browser = next((name for marker, name in _BROWSERS if marker in user_agent), None)
    system = next((name for marker, name in _SYSTEMS if marker in user_agent), None)
    if browser and system:
        return str(_("%(browser)s on %(system)s", browser=browser, system=system))
    if browser or system:
        return browser or str(_("A browser on %(system)s", system=system))
    return user_agent[:60]
