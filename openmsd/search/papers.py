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
from dataclasses import dataclass
from typing import Any, BinaryIO

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from openmsd.corpus.store import Corpus, arrow_table
from openmsd.search.build_cache import per_build
from openmsd.search.citation_graph import citation_graph
from openmsd.search.related import PaperNotFoundError, find_paper

RECORD_SQL = """
SELECT paper_id, doi, title, abstract, language, year, venue, authors, keywords,
       CASE WHEN language IS DISTINCT FROM 'en' THEN nullif(english.title, '') END
           AS english_title,
       CASE WHEN language IS DISTINCT FROM 'en' THEN nullif(english.abstract, '') END
           AS english_abstract
FROM (SELECT *, [t FOR t IN coalesce(translations, []) IF t.language = 'en'][1] AS english
      FROM papers)"""
COLUMNS = ["paper_id", "doi", "title", "abstract", "language", "year", "venue", "authors",
           "keywords", "translations"]


@dataclass(frozen=True)
class PaperRecords:
    """Every paper's record (``table``: the :data:`RECORD_SQL` columns) and each paper id's
    row in it; a record costs about its title and abstract in memory (~1 KB)."""

    rows: dict[str, int]
    table: pa.Table

    @classmethod
    def from_table(cls, papers: pa.Table) -> PaperRecords:
        """The records of a table with the :data:`COLUMNS` of ``papers.parquet``."""
        con = duckdb.connect()
        con.register("papers", papers)
        table = arrow_table(con, RECORD_SQL)
        return cls({paper_id: row for row, paper_id in
                    enumerate(table["paper_id"].to_pylist())}, table)

    def get(self, ids: list[str]) -> list[dict[str, Any]]:
        """The records of the known ``ids``, in their order (unknown ids are left out)."""
        # one slice per row: ``take`` would concatenate the table's chunks (a copy of it all)
        return [self.table.slice(self.rows[i], 1).to_pylist()[0] for i in ids if i in self.rows]


def read_records(source: BinaryIO) -> PaperRecords:
    """The records of an open ``papers.parquet``."""
    return PaperRecords.from_table(pq.read_table(source, columns=COLUMNS))


def paper_records(corpus: Corpus) -> PaperRecords:
    """The paper records of ``corpus``'s current build, loaded once per build (what a
    serving process keeps so that a paper's page needs no scan of ``papers.parquet``)."""
    return per_build(corpus, "papers", read_records)


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
