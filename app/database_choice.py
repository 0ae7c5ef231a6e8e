"""Which database the service and its commands use: SVC_DATABASE_URL, or a SQLite file in the
instance folder (the embedded default).

A `flask ...` command refuses to fall back on that file where it would be a guess: under
SVC_ENV=production, or in an instance folder that the service once ran from on another database
(it leaves a mark there, `database-kind`). Run without the variable, such a command would migrate,
list or change an empty local file while the service's own database stays as it was.
"""

from __future__ import annotations

from pathlib import Path

import click
from flask import Flask
from sqlalchemy.engine import make_url

from app.instance_files import create_once, private_file

MARK = "database-kind"


def database_url(app: Flask) -> str:
    configured = app.config["DATABASE_URL"]
    if configured:
        _remember(app, str(configured))
        return str(configured)
    _refuse_to_guess(app)
    path = Path(app.instance_path) / "svc-auth.db"
    private_file(path)  # password hashes and addresses: the owner's alone
    return f"sqlite:///{path}"


def _remember(app: Flask, configured: str) -> None:
    url = make_url(configured)
    if url.get_backend_name() == "sqlite":
        if url.database and url.database != ":memory:" and not url.database.startswith("file:"):
            private_file(Path(url.database))  # made 0600 before SQLite makes it with the umask
        return
    create_once(Path(app.instance_path) / MARK, lambda: f"{url.get_backend_name()}\n".encode())


def _refuse_to_guess(app: Flask) -> None:
    # A click context is there when the `flask` command loads the app; gunicorn and the tests'
    # factory calls have none.
    if click.get_current_context(silent=True) is None:
        return
    mark = Path(app.instance_path) / MARK
    if app.config["ENV"] == "production":
        why = "SVC_ENV=production"
    elif mark.exists():
        why = (f"the service in {app.instance_path} runs on"
               f" {mark.read_text().strip() or 'another database'}")
    else:
        return
    raise click.ClickException(
        f"SVC_DATABASE_URL is not set ({why}). Without it this command would act on a local"
        f" SQLite file ({Path(app.instance_path) / 'svc-auth.db'}), not on the service's"
        " database: set SVC_DATABASE_URL to the URL the service uses.")
