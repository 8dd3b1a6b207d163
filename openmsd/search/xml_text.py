"""Text for XML documents (SVG, Atom, XHTML): without the characters XML 1.0 forbids (control
characters, lone surrogates), which a title read from any source may hold."""

from __future__ import annotations

import re

__all__ = ["xml_text"]

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def xml_text(value: object) -> str:
    """``value`` as XML text, without the characters XML 1.0 forbids.

    >>> xml_text("a\\x00b\\x1bc")
    'abc'
    """
    return _NOT_XML.sub("", str(value))
