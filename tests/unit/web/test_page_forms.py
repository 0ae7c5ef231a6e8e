"""The pages' forms render their inputs as WTForms does, attribute for attribute
(app/web/page_forms.py renders them without a Markup.format per attribute)."""

from __future__ import annotations

import re

import pytest
from flask import Flask
from wtforms.widgets import html_params as wtforms_html_params

from app.web import page_forms

pytestmark = pytest.mark.app_settings("pages")

CASES = [
    {"name": "email", "id": "email", "value": "a\"b<c>&'d@example.com", "required": True},
    {"type": "checkbox", "checked": True, "disabled": False, "class_": "x y",
     "data_foo_bar": "1", "aria_described_by": "keep-hint", "minlength": 8},
    {"value": "", "autocomplete": "one-time-code", "for_": "x", "data_": "d"},
]


@pytest.mark.parametrize("params", CASES)
def test_the_same_attributes_as_wtforms(params: dict[str, object]) -> None:
    assert str(page_forms.html_params(**params)) == str(wtforms_html_params(**params))


def test_the_pages_are_the_same_with_wtforms_own_widgets(app: Flask) -> None:
    def pages() -> list[str]:
        client = app.test_client()
        return [re.sub(r'value="[^"]{40,}"', "", client.get(path).text) for path in
                ("/login?login_hint=a%22b%3Cc%40example.com", "/signup", "/forgot-password")]

    ours = pages()
    lean = dict(page_forms.LEAN)
    page_forms.LEAN.clear()
    try:
        assert pages() == ours
    finally:
        page_forms.LEAN.update(lean)
