"""Every corpus paper's record, in memory, by paper id: ``paper_id``, ``doi``, ``title``,
``abstract``, ``abstract_source`` (the format its abstract came from), ``type`` (the kind of
work as its source names it: the corpus's ``doc_type``), ``language``, ``year``, ``venue``,
``authors``, ``keywords`` and, for a paper that is not English, ``english_title`` and
``english_abstract`` (its English translation's, if any).

Read once per corpus build (:mod:`openmsd.search.resources`) instead of scanning
``papers.parquet`` on every request: search results show a record's summary columns, a paper's
page and BibTeX export the whole record. A record costs about its title and abstract (~1 KB).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, BinaryIO

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from openmsd.corpus import Corpus
from openmsd.io import arrow_table
from openmsd.search.resources import resources_of

RECORD_SQL = """
SELECT paper_id, doi, title, abstract, abstract_source, doc_type AS type, language, year, venue,
       authors,
       keywords,
       CASE WHEN language IS DISTINCT FROM 'en' THEN nullif(english.title, '') END
           AS english_title,
       CASE WHEN language IS DISTINCT FROM 'en' THEN nullif(english.abstract, '') END
           AS english_abstract
FROM (SELECT *, [t FOR t IN coalesce(translations, []) IF t.language = 'en'][1] AS english
      FROM papers)"""
COLUMNS = ["paper_id", "doi", "title", "abstract", "abstract_source", "doc_type", "language",
           "year", "venue", "authors", "keywords", "translations"]
LATER = {"abstract_source", "doc_type"}  # columns a corpus built before them lacks: read as null


LONG = ("abstract", "english_abstract")
"""The record columns read from the papers table when asked for (a whole record, a snippet),
not kept in memory: they are most of a record's size."""
LONG_SQL = """
SELECT paper_id, abstract,
       CASE WHEN language IS DISTINCT FROM 'en' THEN nullif(english.abstract, '') END
           AS english_abstract
FROM (SELECT paper_id, abstract, language,
             [t FOR t IN coalesce(translations, []) IF t.language = 'en'][1] AS english
      FROM read_parquet(?) WHERE paper_id IN (SELECT unnest(?)))"""


@dataclass(frozen=True)
class PaperRecords:
    """Every paper's record (``table``: the :data:`RECORD_SQL` columns, but the
    :data:`LONG` ones when ``path`` names the papers table they are read from) and each paper
    id's row in it."""

    rows: dict[str, int]
    table: pa.Table
    #: the ``papers.parquet`` the :data:`LONG` columns are read from (None: they are in
    #: ``table``)
    path: str | None = None
    #: columns asked for by name (a result's summary), as Python values, read on first ask
    lists: dict[str, list[Any]] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_table(cls, papers: pa.Table, path: str | None = None) -> PaperRecords:
        """The records of a table with the :data:`COLUMNS` of ``papers.parquet``; with
        ``path`` (that file), the :data:`LONG` columns are left to be read from it."""
        con = duckdb.connect()
        con.register("papers", papers)
        table = arrow_table(con, RECORD_SQL)
        if path is not None:
            table = table.drop_columns(list(LONG))
        return cls({paper_id: row for row, paper_id in
                    enumerate(table["paper_id"].to_pylist())}, table, path)

    def __contains__(self, paper_id: str) -> bool:
        return paper_id in self.rows

    def get(self, ids: list[str], columns: list[str] | None = None) -> list[dict[str, Any]]:
        """The records of the known ``ids``, in their order (unknown ids are left out), with
        only ``columns`` when given (read from :meth:`column`: a search or related answer
        shows ten records' summaries, which Arrow slices cost ~4× as much to read)."""
        known = [i for i in ids if i in self.rows]
        long = self._long(known, columns)
        if columns is not None:
            values = [long[name] if name in long else self.column(name) for name in columns]
            return [dict(zip(columns, [v[i] if isinstance(v, dict) else v[self.rows[i]]
                                       for v in values], strict=True)) for i in known]
        # one slice per row: ``take`` would concatenate the table's chunks (a copy of it all)
        rows = [self.table.slice(self.rows[i], 1) for i in known]
        found = pa.concat_tables(rows).to_pylist() if rows else []
        if not long:
            return found
        order = [c for c in RECORD_COLUMNS if c in self.table.column_names or c in long]
        return [{c: long[c][i] if c in long else record[c] for c in order}
                for i, record in zip(known, found, strict=True)]

    def _long(self, ids: list[str], columns: list[str] | None) -> dict[str, dict[str, Any]]:
        """The :data:`LONG` columns asked for (all with ``columns`` None) of ``ids``, by
        column and paper id, read from :attr:`path`; empty when they are in the table."""
        wanted = [c for c in LONG if columns is None or c in columns]
        if self.path is None or not wanted:
            return {}
        if not ids:
            return {c: {} for c in wanted}
        read = duckdb.connect().execute(LONG_SQL, [self.path, ids]).fetchall()
        out: dict[str, dict[str, Any]] = {c: {} for c in wanted}
        for paper_id, abstract, english in read:
            for name, value in (("abstract", abstract), ("english_abstract", english)):
                if name in out:
                    out[name][paper_id] = value
        return out

    def column(self, name: str) -> list[Any]:
        """Column ``name`` of every record as Python values, read once (the summary columns
        of 100,000 papers: ~40 MB)."""
        found = self.lists.get(name)
        if found is None:
            found = self.lists.setdefault(name, self.table[name].to_pylist())
        return found


RECORD_COLUMNS = ["paper_id", "doi", "title", "abstract", "abstract_source", "type", "language",
                  "year", "venue", "authors", "keywords", "english_title", "english_abstract"]
"""The columns of a record, in :data:`RECORD_SQL`'s order."""


def read_records(source: BinaryIO) -> PaperRecords:
    """The records of an open ``papers.parquet`` (its :data:`LONG` columns read from the
    file when asked for, where the file has a name)."""
    path = getattr(source, "name", None)
    path = path if isinstance(path, str) else None
    file = pq.ParquetFile(source)
    present = set(file.schema_arrow.names) - ({"abstract"} if path else set())
    table = file.read(columns=[c for c in COLUMNS if c in present])
    for name in sorted((LATER | {"abstract"}) - present):  # read as null; abstracts later
        table = table.append_column(name, pa.nulls(table.num_rows, pa.string()))
    return PaperRecords.from_table(table.select(COLUMNS), path)


def load_paper_records(corpus: Corpus) -> PaperRecords:
    """The paper records of ``corpus``'s current build, loaded once per build."""
    return resources_of(corpus).table("papers", read_records)


def read_aliases(source: BinaryIO) -> dict[str, str]:
    """Each alias of an open ``papers.parquet`` (``doi:…``, ``openalex:W…``) -> the first
    paper in the table that has it."""
    table = pq.ParquetFile(source).read(columns=["paper_id", "aliases"])
    found: dict[str, str] = {}
    for paper_id, names in zip(table["paper_id"].to_pylist(), table["aliases"].to_pylist(),
                               strict=True):
        for name in names or ():
            found.setdefault(name, paper_id)
    return found


def paper_aliases(corpus: Corpus) -> dict[str, str]:
    """The alias -> paper id map of ``corpus``'s current build, loaded once per build (a
    lookup instead of a scan of every paper's aliases per request)."""
    return resources_of(corpus).table("papers", read_aliases)
