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
from openmsd.search.paper_records import paper_records
from openmsd.search.related import PaperNotFoundError, find_paper


def paper_details(corpus: Corpus, key: str) -> dict[str, Any]:
    """The paper named by ``key`` (id, DOI or alias): ``paper_id``, ``doi``, ``title``,
    ``abstract``, ``language``, ``year``, ``venue``, ``authors``, ``keywords``,
    ``english_title``, ``english_abstract`` (for a non-English paper that has them),
    ``references`` (its citations to corpus papers) and ``cited_by`` (corpus papers citing it).
    :class:`openmsd.search.related.PaperNotFoundError` for an unknown key."""
    paper_id = find_paper(corpus, key)
    found = paper_records(corpus).get([paper_id])
    if not found:  # gone in a re-ingest since find_paper looked
        raise PaperNotFoundError(f"{corpus.root}: no paper with id or DOI {key!r}")
    graph = citation_graph(corpus)
    return {**found[0],
            "references": graph.reference_count(paper_id),
            "cited_by": graph.citer_count(paper_id)}


def papers_by_id(corpus: Corpus, ids: list[str]) -> list[dict[str, Any]]:
    """The records (as :func:`paper_details`, without counts) of the known ``ids``, in their
    order; unknown ids are left out."""
    return paper_records(corpus).get(ids)


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
