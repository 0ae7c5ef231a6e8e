"""Times in the person's time zone (app/pages/times.py, static/local-times.js) in Chromium: the
account page's devices say when they were last used in the browser's zone, in the page's language;
without script, in UTC, saying so. (What the page renders: tests/unit/pages/test_times.py.)"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from tests.support.browser import ContextFactory, Site, signed_in

pytestmark = pytest.mark.e2e

THIS_BROWSER = "ul.sessions li:has(.badge.ok) time"


@pytest.mark.parametrize(("zone", "language", "said_zone"), [
    ("Asia/Kolkata", "en", "GMT+5:30"), ("America/New_York", "de", "GMT-5")])
def test_a_devices_time_is_in_the_browsers_zone(new_context: ContextFactory, site: Site,
                                                zone: str, language: str, said_zone: str):
    context = new_context(timezone_id=zone)
    page = context.new_page()
    signed_in(page, site, "zone")
    context.add_cookies([{"name": "svc_lang", "value": language, "url": site.url("/")}])
    page.reload()
    expect(page.locator("html")).to_have_attribute("lang", language)
    when = page.locator(THIS_BROWSER)
    expect(when).to_contain_text(said_zone)  # the script has run
    utc = datetime.fromisoformat(when.get_attribute("datetime").replace("Z", "+00:00"))
    local = utc.astimezone(ZoneInfo(zone))
    said = when.inner_text()
    assert f"{local.minute:02d}:{local.second:02d}" in said and "UTC" not in said
    hour = local.hour if language == "de" else (local.hour % 12 or 12)
    assert f"{hour}:{local.minute:02d}" in said, said
    assert when.get_attribute("title").endswith(" UTC")  # the UTC words kept
    assert str(local.year) in said


def test_without_script_the_time_says_utc(new_context: ContextFactory, site: Site):
    page = new_context(timezone_id="Asia/Kolkata", java_script_enabled=False).new_page()
    signed_in(page, site, "noscript")
    when = page.locator(THIS_BROWSER)
    expect(when).to_contain_text("UTC")
    utc = datetime.fromisoformat(when.get_attribute("datetime").replace("Z", "+00:00"))
    assert f"{utc.minute:02d}:{utc.second:02d}" in when.inner_text()
