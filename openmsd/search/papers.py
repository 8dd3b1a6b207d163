"""A paper's record as people read it: metadata, English title and abstract, citation counts,
and BibTeX entries of papers.

>>> print(bibtex_entry({"paper_id": "taln-2009-long-004", "title": "L'analyse {syntaxique}",
...                     "authors": ["Anne Abeillé", "Benoît Crabbé"], "year": 2009,
...                     "venue": "TALN", "doi": None}))
@article{abeille2009analyse,
  title = {L'analyse syntaxique},
  author = {Anne Abeillé and Benoît Crabbé},
  year = {2009},
  journal = {TALN},
  note = {openmsd:taln-2009-long-004}
}
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from openmsd.corpus.store import Corpus
from openmsd.search.citation_graph import citation_graph
from openmsd.search.related import find_paper

_FIELDS = """paper_id, doi, title, abstract, language, year, venue, authors, keywords,
    [t FOR t IN coalesce(translations, []) IF t.language = 'en'][1] AS english"""


def _record(row: tuple, names: list[str]) -> dict[str, Any]:
    paper = dict(zip(names, row, strict=True))
    english = paper.pop("english") or {}
    english_title = english.get("title") if paper["language"] != "en" else None
    english_abstract = english.get("abstract") if paper["language"] != "en" else None
    return {**paper, "english_title": english_title or None,
            "english_abstract": english_abstract or None}


def paper_details(corpus: Corpus, key: str) -> dict[str, Any]:
    """The paper named by ``key`` (id, DOI or alias): ``paper_id``, ``doi``, ``title``,
    ``abstract``, ``language``, ``year``, ``venue``, ``authors``, ``keywords``,
    ``english_title``, ``english_abstract`` (for a non-English paper that has them),
    ``references`` (its citations to corpus papers) and ``cited_by`` (corpus papers citing it).
    :class:`openmsd.search.related.PaperNotFoundError` for an unknown key."""
    paper_id = find_paper(corpus, key)
    con = corpus.connect()
    cursor = con.execute(f"SELECT {_FIELDS} FROM papers p WHERE paper_id = ?", [paper_id])
    names = [d[0] for d in cursor.description]
    graph = citation_graph(corpus)
    return {**_record(cursor.fetchone(), names), "references": graph.reference_count(paper_id),
            "cited_by": graph.citer_count(paper_id)}


def papers_by_id(corpus: Corpus, ids: list[str]) -> list[dict[str, Any]]:
    """The records (as :func:`paper_details`, without counts) of the known ``ids``, in their
    order; unknown ids are left out."""
    con = corpus.connect()
    cursor = con.execute(f"SELECT {_FIELDS} FROM papers WHERE paper_id IN "
                         "(SELECT unnest(?::VARCHAR[]))", [ids])
    names = [d[0] for d in cursor.description]
    found = {row[0]: _record(row, names) for row in cursor.fetchall()}
    return [found[i] for i in ids if i in found]


def _ascii_word(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", plain.lower())


def _braced(value: str) -> str:
    """A value safe inside ``{...}``: braces and backslashes dropped, whitespace collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"[{}\\]", "", value)).strip()


_STOP = {"a", "an", "the", "on", "of", "for", "in", "and", "la", "le", "les", "l", "de", "des",
         "du", "un", "une", "el", "los", "las", "o", "os", "der", "die", "das", "d"}


def bibtex_entry(paper: dict[str, Any]) -> str:
    """One BibTeX ``@article`` of a paper record (keys as :func:`paper_details`)."""
    authors = paper.get("authors") or []
    surname = _ascii_word(authors[0].split()[-1]) if authors and authors[0].split() else ""
    words = [_ascii_word(w) for w in re.split(r"[\s'’]+", paper.get("title") or "")]
    word = next((w for w in words if w and w not in _STOP), "")
    key = f"{surname or 'anon'}{paper.get('year') or ''}{word}" or _ascii_word(paper["paper_id"])
    fields = [("title", paper.get("title")), ("author", " and ".join(authors) or None),
              ("year", str(paper["year"]) if paper.get("year") else None),
              ("journal", paper.get("venue")), ("doi", paper.get("doi")),
              ("note", f"openmsd:{paper['paper_id']}")]
    body = ",\n".join(f"  {name} = {{{_braced(value)}}}" for name, value in fields if value)
    return f"@article{{{key},\n{body}\n}}"


def bibtex(papers: list[dict[str, Any]]) -> str:
    """BibTeX entries of paper records, keys made unique (``a``, ``b``... suffixes)."""
    entries, seen = [], {}
    for paper in papers:
        entry = bibtex_entry(paper)
        key = entry[len("@article{"):entry.index(",")]
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            entry = entry.replace(key, f"{key}{chr(ord('a') + seen[key] - 2)}", 1)
        entries.append(entry)
    return "\n\n".join(entries) + ("\n" if entries else "")
