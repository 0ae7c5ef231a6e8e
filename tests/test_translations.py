"""The catalogues (docs/accounts/languages.md): every message the code and the templates say is
translated in every shipped language, each compiled .mo is its .po, and no template says words
outside gettext."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po
from jinja2 import Environment

from app.web.locale import CODES, DEFAULT

ROOT = Path(__file__).resolve().parent.parent
TRANSLATIONS = ROOT / "app" / "translations"
SHIPPED = [code for code in CODES if code != DEFAULT]
KEYWORDS = {**DEFAULT_KEYWORDS, "N_": None, "_l": None}


def _extracted() -> set[str]:
    with (ROOT / "babel.cfg").open() as config:
        method_map, options_map = parse_mapping_cfg(config, "babel.cfg")
    found = set()
    for *_, message, _comments, _context in extract_from_dir(
            str(ROOT), method_map, options_map, keywords=KEYWORDS):
        found.add(message[0] if isinstance(message, tuple) else message)
    return found


EXTRACTED = _extracted()


def _catalogue(code: str):  # type: ignore[no-untyped-def]
    with (TRANSLATIONS / code / "LC_MESSAGES" / "messages.po").open("rb") as po:
        return read_po(po, locale=code)


def test_the_extraction_finds_the_pages_the_forms_the_domain_and_the_mails():
    assert {"Sign in", "Email", "Incorrect email or password.", "Reset your password",
            "%(num)d second", "Try again in %(wait)s."} <= EXTRACTED
    assert len(EXTRACTED) > 250


@pytest.mark.parametrize("code", SHIPPED)
def test_every_message_is_translated(code):
    catalogue = _catalogue(code)
    missing = []
    for msgid in sorted(EXTRACTED):
        message = catalogue.get(msgid)
        strings = message.string if message is not None and isinstance(message.string, tuple) \
            else (message.string,) if message is not None else ("",)
        if message is None or message.fuzzy or not all(strings):
            missing.append(msgid)
    assert missing == []


@pytest.mark.parametrize("code", SHIPPED)
def test_translations_keep_their_placeholders(code):
    problems = [(message.id, [str(e) for e in errors])
                for message, errors in _catalogue(code).check() if errors]
    assert problems == []


_MARKUP = re.compile(r"<[^>]*>|&#?\w+;")


@pytest.mark.parametrize("code", SHIPPED)
def test_translations_keep_their_markup_and_add_none(code):
    """A template's translation is trusted markup (only the values in it are escaped): a
    translator's tag or link the English does not have would reach every page in that
    language."""
    changed = []
    for message in _catalogue(code):
        english = _key(message.id)[0]
        for said in filter(None, _key(message.string)):
            if sorted(_MARKUP.findall(said)) != sorted(_MARKUP.findall(english)):
                changed.append((english, said))
    assert changed == []


@pytest.mark.parametrize("code", SHIPPED)
def test_each_compiled_catalogue_is_its_po(code):
    catalogue = _catalogue(code)
    with (TRANSLATIONS / code / "LC_MESSAGES" / "messages.mo").open("rb") as mo:
        compiled = read_mo(mo)
    # (An untranslated plural message is compiled as its English forms: left aside on both.)
    said = {_key(m.id): _key(m.string) for m in catalogue
            if m.id and not m.fuzzy and all(_key(m.string)) and _key(m.string) != _key(m.id)}
    assert {_key(m.id): _key(m.string) for m in compiled
            if m.id and _key(m.string) != _key(m.id)} == said


def _key(value: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


# Words the templates may show as they are, in every language: names and symbols.
ALLOWED_WORDS = {
    "JSON",  # a file format's name, beside the download link
}
_TAG = re.compile(r"<[^>]*>", re.S)
_HUMAN_ATTRIBUTE = re.compile(r'\b(?:title|placeholder|aria-label|alt)="([^"{]*[A-Za-z][^"{]*)"')
TEMPLATES = sorted(path for path in (ROOT / "templates").rglob("*")
                   if path.suffix in (".html", ".txt") and path.parent.name != "console"
                   and path.name != "api_reference.html")


def untranslated_text(source: str) -> list[str]:
    """The words of a template's text outside {% trans %} and {{ _() }} (tags and their
    attributes aside, but for those a person reads)."""
    outside = []
    in_trans = False
    previous = ""
    for _line, kind, value in Environment(  # noqa: S701  (lexed, never rendered)
            extensions=["jinja2.ext.i18n"]).lex(source):
        if kind == "whitespace":
            continue
        if kind == "name" and previous == "block_begin":
            in_trans = value in ("trans", "pluralize") or (in_trans and value != "endtrans")
        previous = kind
        # An expression or a statement stands as one opaque character in the text around it.
        outside.append(value if kind == "data" and not in_trans else "\x00")
    text = re.sub(r"&\w+;", " ", "".join(outside))
    found = _HUMAN_ATTRIBUTE.findall(text)
    text = re.sub(r'\b[\w-]+="[^"]*"', " ", _TAG.sub(" ", text))  # an attribute outside a tag
    words = re.findall(r"[^\W\d_][\w'’-]*", text)
    return found + [word for word in words if word not in ALLOWED_WORDS]


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: str(p.relative_to(ROOT / "templates")))
def test_templates_say_nothing_outside_gettext(path):
    assert untranslated_text(path.read_text()) == []


def test_the_template_check_sees_what_it_must():
    assert untranslated_text("<p>Sign in</p>") == ["Sign", "in"]
    assert untranslated_text('<img alt="A logo">') == ["A logo"]
    assert untranslated_text("{% trans %}Sign in{% endtrans %} {{ _('x') }} · —") == []
    assert untranslated_text("{# a comment #}<b class=\"badge\">{{ name }}</b>") == []
