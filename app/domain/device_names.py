"""A readable name for the device behind a user agent: the account's session list, and mails."""

from __future__ import annotations

import re

from flask_babel import gettext as _

_BROWSERS = (("Edg/", "Edge"), ("Firefox/", "Firefox"), ("Chrome/", "Chrome"),
             ("Chromium/", "Chromium"), ("Safari/", "Safari"))
_SYSTEMS = (("Android", "Android"), ("iPhone", "iPhone"), ("iPad", "iPad"),
            ("Windows", "Windows"), ("Mac OS X", "macOS"), ("Linux", "Linux"))
# A program's own name and version ("curl/8.4.0"). Whoever signs in chooses the user agent: any
# other text of theirs would read, in the owner's mail or list, as words of ours.
_PRODUCT = re.compile(r"[A-Za-z][A-Za-z0-9._-]{0,31}/[0-9][A-Za-z0-9._-]{0,15}")


def describe(user_agent: str | None) -> str:
    if not user_agent:
        return str(_("Unknown device"))
    browser = next((name for marker, name in _BROWSERS if marker in user_agent), None)
    system = next((name for marker, name in _SYSTEMS if marker in user_agent), None)
    if browser and system:
        return str(_("%(browser)s on %(system)s", browser=browser, system=system))
    if browser or system:
        return browser or str(_("A browser on %(system)s", system=system))
    product = (user_agent.split(maxsplit=1) or [""])[0]
    return product if _PRODUCT.fullmatch(product) else str(_("Unknown device"))
