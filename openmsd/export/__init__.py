"""Exports of paper records for reference managers: BibTeX, RIS, CSL-JSON; and results written
back into a Zotero library (:mod:`openmsd.export.zotero`)."""

from openmsd.export.formats import EXPORTS, bibtex, csl_items, csl_json, export, ris, save
from openmsd.export.names import clean, key_suffix, split_name
from openmsd.export.zotero import (
    MAX_WRITE,
    ZoteroError,
    ZoteroPaper,
    ZoteroWrite,
    collection_name,
    write_table,
    write_to_zotero,
)

__all__ = [
    "EXPORTS", "MAX_WRITE", "ZoteroError", "ZoteroPaper", "ZoteroWrite", "bibtex", "clean",
    "collection_name", "csl_items", "csl_json", "export", "key_suffix", "ris", "save",
    "split_name", "write_table", "write_to_zotero",
]
