"""How a site shows on our pages: its name, logo, accent colour and links. A logo is served from
our own origin (the CSP stays `img-src 'self'`) and is checked before it is kept: PNG or WebP of
sane dimensions with nothing after the image's end (no polyglot), or an SVG without script,
event handlers, external references or entities; an accent colour must keep white text on it
and it as text on white readable (WCAG AA, 4.5:1)."""

from __future__ import annotations

import re
import struct
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from app.domain.errors import InvalidBody

MAX_LOGO_BYTES = 100 * 1024
MAX_LOGO_SIDE = 2048  # pixels: a bigger image is a decompression bomb, not a logo
MIN_CONTRAST = 4.5
COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")
PNG, WEBP, SVG = "image/png", "image/webp", "image/svg+xml"


@dataclass(frozen=True)
class Branding:
    display_name: str | None = None
    accent_color: str | None = None
    logo_type: str | None = None  # the logo itself is read only to serve it
    home_url: str | None = None
    privacy_url: str | None = None
    terms_url: str | None = None


def _channel(value: int) -> float:
    c = value / 255
    return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4


def contrast_with_white(colour: str) -> float:
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    luminance = 0.2126 * _channel(r) + 0.7152 * _channel(g) + 0.0722 * _channel(b)
    return 1.05 / (luminance + 0.05)


def checked_colour(untrusted: str) -> str:
    if not COLOUR.fullmatch(untrusted):  # (not match: its `$` takes a final line break)
        raise InvalidBody("An accent colour is #rrggbb.")
    ratio = contrast_with_white(untrusted)
    if ratio < MIN_CONTRAST:
        raise InvalidBody(f"{untrusted} against white is {ratio:.2f}:1; text needs at least "
                          f"{MIN_CONTRAST}:1. Choose a darker colour.")
    return untrusted.lower()


def checked_logo(untrusted: bytes) -> tuple[str, bytes]:
    """The logo's media type and bytes, or InvalidBody saying why it is refused."""
    if len(untrusted) > MAX_LOGO_BYTES:
        raise InvalidBody(f"A logo is at most {MAX_LOGO_BYTES // 1024} KiB.")
    if untrusted.startswith(b"\x89PNG\r\n\x1a\n"):
        return PNG, _checked_png(untrusted)
    if untrusted[:4] == b"RIFF" and untrusted[8:12] == b"WEBP":
        return WEBP, _checked_webp(untrusted)
    if untrusted.lstrip().startswith((b"<?xml", b"<svg")):
        return SVG, _checked_svg(untrusted)
    raise InvalidBody("A logo is a PNG, WebP or SVG image.")


def _side_ok(width: int, height: int) -> None:
    if not (0 < width <= MAX_LOGO_SIDE and 0 < height <= MAX_LOGO_SIDE):
        raise InvalidBody(f"A logo is at most {MAX_LOGO_SIDE} pixels on a side.")


def _checked_png(data: bytes) -> bytes:
    """Walk the chunks: IHDR first with sane dimensions, IEND last, nothing after it."""
    at, first = 8, True
    while at + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if len(body) != length or at + 12 + length > len(data):
            break
        if first:
            if kind != b"IHDR" or length != 13:
                break
            _side_ok(*struct.unpack(">II", body[:8]))
            first = False
        at += 12 + length
        if kind == b"IEND":
            if at != len(data):
                raise InvalidBody("The PNG has data after its end (a polyglot?).")
            return data
    raise InvalidBody("The PNG is malformed.")


def _checked_webp(data: bytes) -> bytes:
    size = struct.unpack("<I", data[4:8])[0]
    if size + 8 != len(data) or len(data) < 30:
        raise InvalidBody("The WebP is malformed or has data after its end.")
    kind = data[12:16]
    if kind == b"VP8X":
        width = 1 + int.from_bytes(data[24:27], "little")
        height = 1 + int.from_bytes(data[27:30], "little")
    elif kind == b"VP8 ":
        width, height = (v & 0x3FFF for v in struct.unpack("<HH", data[26:30]))
    elif kind == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        width, height = (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    else:
        raise InvalidBody("The WebP is malformed.")
    _side_ok(width, height)
    return data


_SVG_ALLOWED = {"svg", "g", "path", "rect", "circle", "ellipse", "line", "polyline", "polygon",
                "text", "tspan", "title", "desc", "defs", "lineargradient", "radialgradient",
                "stop", "clippath", "mask", "symbol"}
_EXTERNAL = re.compile(r"url\(\s*['\"]?\s*(?!#)|javascript:|data:", re.IGNORECASE)


def _checked_svg(data: bytes) -> bytes:
    """Refused unless every element is a drawing one and no attribute scripts, handles an event
    or points outside the image. Entities and DTDs are refused before parsing."""
    if b"<!DOCTYPE" in data.upper() or b"<!ENTITY" in data.upper():
        raise InvalidBody("An SVG logo may not declare a DTD or entities.")
    try:
        root = ET.fromstring(data)  # noqa: S314 (no DTD: refused above, so no entity expansion)
    except ET.ParseError:
        raise InvalidBody("The SVG is not well-formed XML.") from None
    for element in root.iter():
        name = element.tag.rsplit("}", 1)[-1].lower()
        if name not in _SVG_ALLOWED:
            raise InvalidBody(f"An SVG logo may not hold <{name[:32]}>.")
        for attribute, value in element.attrib.items():
            key = attribute.rsplit("}", 1)[-1].lower()
            if key.startswith("on") or (key == "href" and not value.startswith("#")) \
                    or _EXTERNAL.search(value):
                raise InvalidBody(f"An SVG logo may not use the attribute {key[:32]}.")
    return data
