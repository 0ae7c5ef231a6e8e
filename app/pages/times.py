"""Times on the hosted pages in the person's time zone: the page says them in UTC, and says so,
inside <time datetime="…Z" data-local="…">; our own script (static/local-times.js) says them again
in the browser's zone and the page's language. Without script the UTC time stays, marked "UTC"."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from flask_babel import format_date, format_datetime
from markupsafe import Markup

from app.pages.blueprint import bp
from app.pages.own_scripts import own_script

Style = Literal["datetime", "date", "long-date"]


def local_time(value: datetime, style: Style = "datetime") -> Markup:
    """`value` as the page says it: a date and time ("datetime"), or only its day ("date",
    "long-date"), in UTC until the script has run."""
    at = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if style == "datetime":
        said = f"{format_datetime(at, 'medium', rebase=False)} UTC"
    else:
        said = format_date(at, "long" if style == "long-date" else "medium", rebase=False)
    return Markup('<time datetime="{}" data-local="{}">{}</time>{}').format(
        at.strftime("%Y-%m-%dT%H:%M:%SZ"), style, said, own_script("local-times.js"))


bp.add_app_template_global(local_time, "local_time")
