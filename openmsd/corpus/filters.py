"""Which papers a question's filters keep: ``--lang`` and ``--year`` as one boolean mask over
the rows of a table with the papers' ``language`` and ``year`` columns. The only place a
filter becomes a mask: the vector index (below the rankers) and the rankers read it.

>>> import pyarrow as pa
>>> table = pa.table({"language": ["pt", "en", None, "es"], "year": [2020, None, 2021, 2019]})
>>> candidate_mask(table, ["pt", "es"], None).tolist()
[True, False, False, True]
>>> candidate_mask(table, None, (2020, None)).tolist()
[True, False, True, False]
>>> candidate_mask(table, None, None) is None
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from openmsd.corpus.langid import UND
from openmsd.corpus.store import Corpus
from openmsd.io import numbers

__all__ = ["FilterColumns", "Years", "candidate_mask", "corpus_languages"]

Years = tuple[int | None, int | None] | None
"""A year range, each end inclusive (None: open); a paper without a year is in no range."""


@dataclass(frozen=True)
class FilterColumns:
    """Each row's language code (-1: none), the languages coded and each row's year (-1:
    none): a table's filter columns listed once, so that each filtered question is a few
    vector operations."""

    codes: np.ndarray
    coded: list[str | None]
    years: np.ndarray

    @classmethod
    def of(cls, table: pa.Table) -> FilterColumns:
        """The ``language`` and ``year`` columns of ``table``."""
        languages = table["language"].combine_chunks().dictionary_encode()
        codes = numbers(pc.fill_null(languages.indices, -1))
        years = numbers(pc.fill_null(table["year"].cast(pa.int64()), -1))
        return cls(codes, languages.dictionary.to_pylist(), years)

    def mask(self, languages: Sequence[str] | None, years: Years) -> np.ndarray | None:
        """Whether each row is in one of ``languages`` and in the year range (None: no
        filter, every row)."""
        if not languages and not years:
            return None
        mask = np.ones(len(self.codes), bool)
        if languages:
            mask &= np.isin(self.codes, [i for i, lang in enumerate(self.coded)
                                         if lang in languages])
        if years:
            low, high = years
            if low is not None:
                mask &= self.years >= low
            if high is not None:
                mask &= (self.years <= high) & (self.years >= 0)
        return mask


def candidate_mask(table: pa.Table, languages: Sequence[str] | None,
                   years: Years) -> np.ndarray | None:
    """:meth:`FilterColumns.mask` of ``table``'s rows (None: no filter)."""
    if not languages and not years:
        return None
    return FilterColumns.of(table).mask(languages, years)


@lru_cache(maxsize=16)
def _languages(path: Path, stamp: int) -> tuple[str, ...]:
    column = pq.ParquetFile(path).read(columns=["language"])["language"]
    return tuple(sorted(str(v) for v in pc.unique(pc.fill_null(column, UND)).to_pylist()))


def corpus_languages(corpus: Corpus) -> list[str]:
    """The languages of the corpus's papers (``und`` for a paper of none), sorted: what a
    language filter may ask for; read once per build of ``papers.parquet``."""
    path = corpus.table_path("papers")
    return list(_languages(path, path.stat().st_mtime_ns))
