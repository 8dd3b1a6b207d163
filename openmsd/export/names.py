"""Authors' family and given names, and BibTeX keys built from them.

>>> split_name("Anne Abeillé"), split_name("Murphy Fd"), split_name("Murphy, F. D.")
(('Abeillé', 'Anne'), ('Murphy', 'Fd'), ('Murphy', 'F. D.'))
>>> split_name("Wei Li")
('Li', 'Wei')
>>> [key_suffix(n) for n in (0, 1, 25, 26, 27, 701, 702)]
['a', 'b', 'z', 'aa', 'ab', 'zz', 'aaa']
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["ascii_word", "clean", "key_suffix", "split_name"]

_INITIALS = re.compile(r"^(?:[A-Z]\.?-?){1,3}$")
_VOWELS = set("aeiouyAEIOUY")
# control characters, and the bidirectional-text controls (U+061C, U+200E/F, U+202A-E, U+2066-9)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f"
                      "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(text: str) -> str:
    """``text`` without control characters (NUL included), whitespace collapsed."""
    return re.sub(r"\s+", " ", _CONTROL.sub("", text)).strip()


def _is_initials(token: str) -> bool:
    """``FD``, ``F.D.``, ``Fd``, ``IaM``: initials written after a family name (PubMed
    style), not a name: upper-case letters, or up to 4 letters without a vowel or with an
    inner capital."""
    plain = unicodedata.normalize("NFKD", token).encode("ascii", "ignore").decode()
    if _INITIALS.match(plain):
        return True
    letters = plain.replace(".", "")
    return (0 < len(letters) <= 4 and letters[:1].isupper()
            and (not (set(letters) & _VOWELS) or any(c.isupper() for c in letters[1:])))


def split_name(name: str) -> tuple[str, str]:
    """(family, given) of an author name: ``Family, Given``, ``Given Family``, or
    ``Family Initials``."""
    name = clean(name)
    if "," in name:
        family, _, given = name.partition(",")
        return family.strip(), given.strip()
    tokens = name.split()
    if len(tokens) < 2:
        return name, ""
    if _is_initials(tokens[-1]) and not _is_initials(tokens[0]):
        return " ".join(tokens[:-1]), tokens[-1]
    return tokens[-1], " ".join(tokens[:-1])


def ascii_word(text: str) -> str:
    """Lower-case ASCII letters and digits of ``text`` (accents folded)."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", plain.lower())


def key_suffix(n: int) -> str:
    """The ``n``-th (0-based) suffix of a repeated key: ``a``..``z``, ``aa``, ``ab``, ..."""
    out = ""
    n += 1
    while n:
        n, rest = divmod(n - 1, 26)
        out = chr(ord("a") + rest) + out
    return out
