"""The corpus citation graph in memory: what each paper cites and who cites it, by paper id.

``citations.parquet`` (``citing_id``, ``cited_id``) is read once per corpus build into two
compressed sparse rows arrays over node numbers (one node per paper id seen in the table):
``refs[ref_start[n]:ref_start[n + 1]]`` are the nodes paper ``n`` cites and
``citers[citer_start[n]:citer_start[n + 1]]`` those citing it. A related-paper request then
reads a few dozen numbers instead of joining the citations table per result.

:func:`load_citation_graph` keeps one graph per corpus in its search resources and loads it
again when the manifest names another build (a re-ingest): :mod:`openmsd.search.resources`.

>>> import pyarrow as pa
>>> graph = CitationGraph.from_table(pa.table({"citing_id": ["a", "a", "b", "c", "c"],
...                                            "cited_id": ["x", "y", "x", "a", "b"]}))
>>> [(x.cites, x.cited_by, x.shared_references, x.co_cited)
...  for x in graph.links("a", ["b", "c", "z"])]
[(False, False, 1, 1), (False, True, 0, 0), (False, False, 0, 0)]
>>> graph.reference_count("a"), graph.citer_count("x")
(2, 2)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from openmsd.corpus import Corpus
from openmsd.io import numbers
from openmsd.search.resources import resources_of


@dataclass(frozen=True)
class Links:
    """How a paper is linked to a query paper in the citation graph."""

    cites: bool  # the query paper cites it
    cited_by: bool  # it cites the query paper
    shared_references: int  # references both cite (bibliographic coupling)
    co_cited: int  # papers citing both (co-citation)


def _encoded(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A string column dictionary-encoded (as it is when read with ``read_dictionary``)."""
    if pa.types.is_dictionary(column.type):
        return column
    return pa.chunked_array([chunk.cast(pa.string()).dictionary_encode()
                             for chunk in column.chunks],
                            pa.dictionary(pa.int32(), pa.string()))


def _dictionary(column: pa.ChunkedArray) -> pa.Array:
    """The dictionary all chunks of a unified dictionary column share."""
    return (column.chunk(0).dictionary if column.num_chunks else pa.array([], pa.string())
            ).cast(pa.string())


def _indices(column: pa.ChunkedArray) -> np.ndarray:
    """The dictionary indices of a dictionary column, all chunks, as one array."""
    return np.concatenate([np.zeros(0, np.int64)] + [
        numbers(chunk.indices) for chunk in column.chunks])


def _csr(source: np.ndarray, target: np.ndarray, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Row starts (``nodes + 1``) and targets of the edges ``source -> target``, by source."""
    order = np.argsort(source, kind="stable")
    starts = np.zeros(nodes + 1, np.int64)
    np.cumsum(np.bincount(source, minlength=nodes), out=starts[1:])
    return starts, target[order]


@dataclass(frozen=True)
class CitationGraph:
    """Who cites whom: ``nodes`` numbers the paper ids; the arrays are as the module says."""

    nodes: dict[str, int]
    ref_start: np.ndarray
    refs: np.ndarray
    citer_start: np.ndarray
    citers: np.ndarray

    @classmethod
    def from_table(cls, citations: pa.Table) -> CitationGraph:
        """The graph of a table with ``citing_id`` and ``cited_id`` columns (strings, or
        dictionary-encoded strings as :func:`read_graph` reads them); a row missing either id
        (a built corpus has none) links nothing and is left out."""
        table = citations.select(["citing_id", "cited_id"])
        table = table.filter(pc.and_(pc.is_valid(table["citing_id"]),
                                     pc.is_valid(table["cited_id"])))
        table = pa.table({name: _encoded(table[name]) for name in table.column_names})
        table = table.unify_dictionaries()
        dictionaries = [_dictionary(table[name]) for name in table.column_names]
        ids = pa.concat_arrays(dictionaries).unique()
        source, target = (
            numbers(pc.index_in(dictionary, value_set=ids))
            .astype(np.int32)[_indices(table[name])]
            for name, dictionary in zip(table.column_names, dictionaries, strict=True))
        ref_start, refs = _csr(source, target, len(ids))
        citer_start, citers = _csr(target, source, len(ids))
        return cls({paper_id: n for n, paper_id in enumerate(ids.to_pylist())}, ref_start, refs,
                   citer_start, citers)

    def references(self, paper_id: str) -> np.ndarray:
        """The nodes ``paper_id`` cites (one per citation row)."""
        n = self.nodes.get(paper_id)
        return self.refs[self.ref_start[n]:self.ref_start[n + 1]] if n is not None else \
            self.refs[:0]

    def citing(self, paper_id: str) -> np.ndarray:
        """The nodes citing ``paper_id`` (one per citation row)."""
        n = self.nodes.get(paper_id)
        return self.citers[self.citer_start[n]:self.citer_start[n + 1]] if n is not None else \
            self.citers[:0]

    def reference_count(self, paper_id: str) -> int:
        """Citation rows with ``citing_id = paper_id``."""
        return len(self.references(paper_id))

    def citer_count(self, paper_id: str) -> int:
        """Citation rows with ``cited_id = paper_id``."""
        return len(self.citing(paper_id))

    def links(self, query_id: str, ids: list[str]) -> list[Links]:
        """How each of ``ids`` is linked to ``query_id``. Counts are over citation rows, as
        the joins ``citations a JOIN citations b ON a.cited_id = b.cited_id WHERE
        a.citing_id = query AND b.citing_id = id`` (shared references) and ``... ON
        a.citing_id = b.citing_id WHERE a.cited_id = query AND b.cited_id = id`` (co-citations)
        count them."""
        query = self.nodes.get(query_id)
        query_refs = Counter(self.references(query_id).tolist())
        query_citers = Counter(self.citing(query_id).tolist())
        out = []
        for paper_id in ids:
            node = self.nodes.get(paper_id)
            refs = self.references(paper_id).tolist()
            citers = self.citing(paper_id).tolist()
            out.append(Links(
                cites=node is not None and node in query_refs,
                cited_by=query is not None and query in refs,
                shared_references=sum(query_refs[r] for r in refs),
                co_cited=sum(query_citers[c] for c in citers)))
        return out


def read_graph(source: BinaryIO) -> CitationGraph:
    """The graph of an open ``citations.parquet``."""
    columns = ["citing_id", "cited_id"]
    return CitationGraph.from_table(pq.ParquetFile(source, read_dictionary=columns).read(
        columns=columns))


def load_citation_graph(corpus: Corpus) -> CitationGraph:
    """The citation graph of ``corpus``'s current build, loaded once per build."""
    return resources_of(corpus).table("citations", read_graph)
