"""Text for XML documents (SVG, Atom, XHTML): without the characters XML 1.0 forbids (control
characters, lone surrogates), which a title read from any source may hold, nor the
bidirectional-text controls (U+061C, U+200E/F, U+202A-E, U+2066-9: they reorder what follows them
on the screen), as in the terminal, the exports and the web page."""

from __future__ import annotations

import re

__all__ = ["xml_text"]

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff"
                      "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def xml_text(value: object) -> str:
    """``value`` as XML text, without the characters XML 1.0 forbids nor bidi controls.

    >>> xml_text("a\\x00b\\x1bc\\u202ed")
    'abcd'
    """
    return _NOT_XML.sub("", str(value))
