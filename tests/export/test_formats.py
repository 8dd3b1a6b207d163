"""Exports parse back, with the same libraries a reference manager import uses, into the same
records; BibTeX keys come from family names, are unique past 26 repeats, and carry no NUL."""

from __future__ import annotations

import bibtexparser
import orjson
import rispy
from citeproc import (
    Citation,
    CitationItem,
    CitationStylesBibliography,
    CitationStylesStyle,
    formatter,
)
from citeproc.source.json import CiteProcJSON
from hypothesis import given
from hypothesis import strategies as st

from openmsd.export import bibtex, csl_json, ris, split_name
from openmsd.fetch.bibtex import bibtex_entries

PAPERS = [
    {"paper_id": "p1", "title": "Analyse syntaxique {robuste} du français", "year": 2009,
     "authors": ["Anne Abeillé", "Murphy Fd"], "venue": "TALN", "doi": "10.1234/abc",
     "abstract": "Un résumé.", "language": "fr"},
    {"paper_id": "p2", "title": "State of external ocular muscles", "year": 1947,
     "authors": ["Murphy Fd", "Ke Konstantinovskaia"], "venue": None, "doi": None,
     "abstract": None, "language": "en"},
]


def _entries(text: str) -> list[dict[str, str]]:
    """The entries of a BibTeX text (bibtexparser, block by block), each its fields with its
    key as ``ID``; a block it could not parse fails the test."""
    entries, problems = bibtex_entries(text)
    assert problems == []
    assert len(entries) == text.count("@article{")
    assert entries == bibtexparser.loads(text).entries  # the whole text, in one parse
    return entries


def test_bibtex_round_trip_and_family_name_keys() -> None:
    entries = _entries(bibtex(PAPERS, abstracts=True))
    assert [e["ID"] for e in entries] == ["abeille2009analyse", "murphy1947state"]
    assert entries[0]["author"] == "Abeillé, Anne and Murphy, Fd"
    assert entries[0]["title"] == "Analyse syntaxique robuste du français"
    assert entries[0]["doi"] == "10.1234/abc" and entries[0]["year"] == "2009"
    assert entries[1]["note"] == "openmsd:p2"


def test_duplicate_keys_past_z_stay_letters() -> None:
    same = [dict(PAPERS[1], paper_id=f"p{i}") for i in range(30)]
    keys = [e["ID"] for e in _entries(bibtex(same))]
    assert len(set(keys)) == 30
    assert keys[27] == "murphy1947stateaa" and keys[28] == "murphy1947stateab"
    assert all(k.isalnum() for k in keys)


def test_nul_and_control_characters_never_reach_bibtex() -> None:
    text = bibtex([dict(PAPERS[0], title="Null\x00byte\x07 title", authors=["A\x00na Silva"])])
    assert "\x00" not in text and "\x07" not in text
    assert _entries(text)[0]["title"] == "Nullbyte title"


def test_ris_round_trip() -> None:
    text = ris(PAPERS)
    assert text.startswith("TY  - JOUR\n")
    entries = rispy.loads(text)
    assert [e["id"] for e in entries] == ["p1", "p2"]
    assert entries[0]["authors"] == ["Abeillé, Anne", "Murphy, Fd"]
    assert entries[0]["title"] == PAPERS[0]["title"] and entries[0]["doi"] == "10.1234/abc"
    assert entries[0]["year"] == "2009" and entries[0]["journal_name"] == "TALN"


def test_csl_json_reads_back_and_renders_with_citeproc() -> None:
    items = orjson.loads(csl_json(PAPERS))
    assert items[0]["author"][0] == {"family": "Abeillé", "given": "Anne"}
    source = CiteProcJSON(items)
    style = CitationStylesStyle("harvard-cite-them-right", validate=False)
    bibliography = CitationStylesBibliography(style, source, formatter.plain)
    bibliography.register(Citation([CitationItem("p1")]))
    assert "Abeillé" in str(bibliography.bibliography()[0])


@given(st.lists(st.text(min_size=1), min_size=1, max_size=4), st.text())
def test_any_text_gives_parseable_bibtex(authors: list[str], title: str) -> None:
    text = bibtex([{"paper_id": "x", "title": title, "authors": authors, "year": 2000}])
    entries = _entries(text)
    assert len(entries) == 1 and entries[0]["ID"].isascii()


def test_split_name() -> None:
    assert split_name("Murphy Fd") == ("Murphy", "Fd")
    assert split_name("Jean-Pierre Dupont") == ("Dupont", "Jean-Pierre")
    assert split_name("Dupont, J.-P.") == ("Dupont", "J.-P.")
