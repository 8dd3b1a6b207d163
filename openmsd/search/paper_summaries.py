"""What a search result shows of each corpus paper, in memory: ``paper_id``, ``title``,
``language``, ``year``, ``venue``, ``doi`` and ``english_title`` (the title of its English
translation, if any), by paper id.

Read once per corpus build (:mod:`openmsd.search.build_cache`) instead of scanning
``papers.parquet`` (titles, abstracts and translations) on every request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, BinaryIO

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from openmsd.corpus.store import Corpus, arrow_table
from openmsd.search.build_cache import per_build

SUMMARY_SQL = """
SELECT paper_id, title, language, year, venue, doi,
       [t.title FOR t IN coalesce(translations, []) IF t.language = 'en'][1] AS english_title
FROM papers"""
COLUMNS = ["paper_id", "title", "language", "year", "venue", "doi", "translations"]


@dataclass(frozen=True)
class PaperSummaries:
    """The summary columns of every paper (``table``) and each paper id's row in it."""

    rows: dict[str, int]
    table: pa.Table

    @classmethod
    def from_table(cls, papers: pa.Table) -> PaperSummaries:
        """Summaries of a table with the :data:`COLUMNS` of ``papers.parquet``."""
        con = duckdb.connect()
        con.register("papers", papers)
        table = arrow_table(con, SUMMARY_SQL).combine_chunks()  # ``take`` would combine them
        return cls({paper_id: row for row, paper_id in
                    enumerate(table["paper_id"].to_pylist())}, table)

    def __contains__(self, paper_id: str) -> bool:
        return paper_id in self.rows

    def get(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        """The summaries of the known ``ids``, by id."""
        known = [self.rows[i] for i in dict.fromkeys(ids) if i in self.rows]
        rows = self.table.take(pa.array(known, pa.int64())).to_pylist()
        return {row["paper_id"]: row for row in rows}


def read_summaries(source: BinaryIO) -> PaperSummaries:
    """The summaries of an open ``papers.parquet``."""
    return PaperSummaries.from_table(pq.read_table(source, columns=COLUMNS))


def paper_summaries(corpus: Corpus) -> PaperSummaries:
    """The paper summaries of ``corpus``'s current build, loaded once per build."""
    return per_build(corpus, "papers", read_summaries)
