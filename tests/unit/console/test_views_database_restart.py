"""The console while its PostgreSQL restarts (issue 33 finding 16): a page whose read could not be
traced is the console's 503 page, never a 500, and shows nothing of the account."""

from __future__ import annotations

from app.console import views
from tests.support.audit import audit_rows
from tests.support.outages import database_url, outage, then  # noqa: F401 (fixtures)
from tests.unit.console.test_views import operator  # noqa: F401 (a fixture)


def test_a_page_whose_trace_was_not_kept_is_a_503_page(
        app, user, operator, outage, monkeypatch, caplog):  # noqa: F811
    browser, _op, _secret = operator
    # The page is made, then the database goes: only the trace of the read fails.
    monkeypatch.setattr(views, "render_template", then(outage, views.render_template))
    page = browser.get(f"/admin/users/{user.id}")
    assert page.status_code == 503, page.text
    assert page.headers["Content-Type"].startswith("text/html")
    assert user.email not in page.text and "Traceback" not in page.text
    assert f"event=console:account users={user.id}" in caplog.text
    outage.end()
    assert browser.get(f"/admin/users/{user.id}").status_code == 200
    assert [e.user_id for e in audit_rows(app, event="console:account")] == [user.id]
