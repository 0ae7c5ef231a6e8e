"""The hosted pages' form base: Flask-WTF's, with WTForms' input widgets rendering their
attributes without a `Markup.format` per attribute (WTForms' `html_params` runs Python's string
formatter for each: about 60 calls an attribute, most of a page's form). Same output, attribute
for attribute; the widgets are swapped in through WTForms' public `Meta.bind_field`."""

from __future__ import annotations

from typing import Any

from flask_wtf import FlaskForm
from markupsafe import Markup, escape
from wtforms import widgets


def html_params(**kwargs: Any) -> Markup:
    """`wtforms.widgets.html_params`: sorted by name, `_` suffix dropped, `data_` and `aria_`
    names hyphenated, True a bare attribute, False none, every value escaped."""
    params = []
    for name, value in sorted(kwargs.items()):
        key = name.rstrip("_")
        if key.startswith(("data_", "aria_")):
            key = key.replace("_", "-")
        if value is True:
            params.append(str(escape(key)))
        elif value is not False:
            params.append(f'{escape(key)}="{escape(value)}"')
    return Markup(" ".join(params))  # noqa: S704 (each part escaped above)


class _Lean:
    html_params = staticmethod(html_params)


class TextInput(_Lean, widgets.TextInput):
    pass


class EmailInput(_Lean, widgets.EmailInput):
    pass


class PasswordInput(_Lean, widgets.PasswordInput):
    pass


class HiddenInput(_Lean, widgets.HiddenInput):
    pass


class CheckboxInput(_Lean, widgets.CheckboxInput):
    pass


# A field class's default widget (exactly this class) -> ours; a field given a widget of its
# own keeps it. PasswordInput's default hides the value, as ours does.
LEAN: dict[type[Any], Any] = {
    widgets.TextInput: TextInput(), widgets.EmailInput: EmailInput(),
    widgets.PasswordInput: PasswordInput(), widgets.HiddenInput: HiddenInput(),
    widgets.CheckboxInput: CheckboxInput()}


class PageForm(FlaskForm):
    class Meta:
        def bind_field(self, form: Any, unbound_field: Any, options: dict[str, Any]) -> Any:
            default = getattr(unbound_field.field_class, "widget", None)
            lean = LEAN.get(type(default))
            if lean is not None and "widget" not in unbound_field.kwargs:
                options = {**options, "widget": lean}
            return super().bind_field(form, unbound_field, options)  # type: ignore[misc]
