"""Exports of paper records for reference managers: BibTeX, RIS, CSL-JSON.

Everything other packages use is imported from here; the names load lazily (PEP 562), so
importing the package costs nothing and creates no import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openmsd.faces import lazy_getattr

if TYPE_CHECKING:
    from openmsd.export.formats import EXPORTS, bibtex, csl_items, csl_json, export, ris, save
    from openmsd.export.names import key_suffix, split_name

_WHERE: dict[str, str] = {
    "EXPORTS": "formats",
    "bibtex": "formats",
    "csl_items": "formats",
    "csl_json": "formats",
    "export": "formats",
    "key_suffix": "names",
    "ris": "formats",
    "save": "formats",
    "split_name": "names",
}

__all__ = [
    "EXPORTS", "bibtex", "csl_items", "csl_json", "export", "key_suffix", "ris", "save",
    "split_name",
]


__getattr__ = lazy_getattr(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
