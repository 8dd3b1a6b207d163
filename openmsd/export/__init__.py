"""Exports of paper records for reference managers: BibTeX, RIS, CSL-JSON."""

from openmsd.export.formats import EXPORTS, bibtex, csl_items, csl_json, export, ris, save
from openmsd.export.names import key_suffix, split_name

__all__ = [
    "EXPORTS", "bibtex", "csl_items", "csl_json", "export", "key_suffix", "ris", "save",
    "split_name",
]
