"""The support console (/admin): server-rendered pages, no script, for operators (accounts given
the role from the CLI) with a second factor."""

from app.console import views
from app.console.blueprint import bp

__all__ = ["bp", "views"]
