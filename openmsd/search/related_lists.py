"""Related papers computed once per corpus build and served by lookup.

A corpus paper's related papers under a fused ranker (``hybrid-graph``) are a function of the
corpus build, the ranker's spec, the dense members' vectors and index, and the ranking code:
nothing a request adds. :func:`compute_related_lists` ranks every paper once (``openmsd index
related CORPUS``), in batches (each member scores a batch of queries' candidates at once), and
writes each paper's first :data:`DEPTH` results, their fused scores and the text signals that
put them there to ``index/.related/RANKER.parquet`` (written whole, then renamed into place).

:func:`stored_related` answers from that table when it was computed for exactly what would be
ranked now (:func:`lists_key`: the build id, the tuned spec, each dense member's vector files
and index build, the version of openmsd and of the lists' format) and the request asks for no
filter and at most :data:`DEPTH` results; otherwise the caller ranks live. The fused order
breaks ties by row (:meth:`openmsd.rank.Fusion.top_k_explained`), so the first ``k`` stored
results are the live answer for ``k`` (tested).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from openmsd import __version__
from openmsd.corpus import Corpus
from openmsd.io import ParquetSink, numbers
from openmsd.rank import (
    Fusion,
    Queries,
    Scorer,
    dense_members,
    is_dense,
    leaves,
    member_words,
    signals,
    tuned,
)
from openmsd.search.resources import SearchResources, resources_of
from openmsd.vectors import model_slug

__all__ = ["DEPTH", "RelatedLists", "compute_related_lists", "is_current", "kept_lists",
           "lists_key", "lists_path", "stored_related"]

#: Results kept per paper: a request for ``offset + k + 1`` up to this is answered by lookup.
DEPTH = 50
#: Query papers ranked together.
BATCH = 256
#: The stored lists' format: a change of it (or of openmsd's version) makes them stale.
FORMAT = 1
log = logging.getLogger("openmsd.search")


@dataclass
class RelatedLists:
    """Each paper's (by its row of the ranker's collection) first results: rows, fused scores
    and the index of its text signals in ``signal_sets``; row -1 past the last result."""

    key: str
    rows: np.ndarray  # (papers × depth) int32
    scores: np.ndarray  # (papers × depth) float32
    signals: np.ndarray  # (papers × depth) int16
    signal_sets: list[list[str]]

    @property
    def depth(self) -> int:
        return self.rows.shape[1]


def lists_path(corpus: Corpus, ranker: str) -> Path:
    """Where the stored lists of ``ranker`` live: beside the corpus's indexes."""
    return corpus.layout.related_file(model_slug(ranker))


def _dense_names(corpus: Corpus, ranker: str) -> list[str]:
    """The dense models ``ranker`` reads vectors of (``NAME@LANG``: ``NAME``), in order."""
    names = []
    for leaf in leaves(ranker, corpus):
        name = leaf.bare.vector_key
        if is_dense(leaf.bare, corpus) and name not in names:
            names.append(name)
    return names


def lists_key(resources: SearchResources, ranker: str, dense: list[str] | None = None) -> str:
    """What a ranker's related lists depend on, hashed: the corpus build, the ranker's tuned
    spec, each dense member's stored vector files and current index build, the version of
    openmsd and of the lists' format. ``dense``: the names of the ranker's dense members, when
    known (else read from its leaves). Each distinct description is hashed once."""
    corpus = resources.corpus
    models = tuple((name, resources.vectors_stamp(name), resources.index_build(name))
                   for name in (_dense_names(corpus, ranker) if dense is None else dense))
    build, spec = resources.current_build(), tuned(corpus).get(ranker)

    def digest() -> str:
        what = {"build": build, "ranker": ranker, "spec": spec and spec.as_json(),
                "dense": [list(m) for m in models], "version": [__version__, FORMAT]}
        return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:24]

    return resources.kept(("related key", ranker), (build, repr(spec), models), digest)


def is_current(corpus: Corpus, ranker: str) -> bool:
    """Whether ``ranker``'s stored lists were computed for what would be ranked now."""
    try:
        meta = pq.read_schema(lists_path(corpus, ranker)).metadata or {}
    except (FileNotFoundError, OSError, pa.ArrowInvalid):
        return False
    return meta.get(b"openmsd.related_key", b"").decode() == lists_key(resources_of(corpus),
                                                                       ranker)


def compute_related_lists(corpus: Corpus, ranker: str, depth: int = DEPTH,
                          batch: int = BATCH, workers: int = 1,
                          progress: Callable[[int, int], None] | None = None) -> Path:
    """Rank every paper of ``corpus`` with the fused ``ranker`` and store its first ``depth``
    results (:func:`lists_path`); ``workers`` processes (forked once the ranker is loaded)
    rank batches of ``batch`` papers; ``progress(done, total)`` after each batch."""
    resources = resources_of(corpus)
    scorer = resources.scorer(ranker)
    if not isinstance(scorer, Fusion):
        raise ValueError(f"related lists are for fused rankers (hybrid-graph, A+B); "
                         f"{ranker!r} is not one")
    key = lists_key(resources, ranker)
    papers = scorer.papers
    total = len(papers)
    rows = np.full((total, depth), -1, np.int32)
    scores = np.full((total, depth), -np.inf, np.float32)
    codes = np.zeros((total, depth), np.int16)
    sets: dict[tuple[str, ...], int] = {}
    starts = range(0, total, batch)
    ranking = _Batches(scorer, depth, batch)
    if workers > 1:
        # forked workers inherit the loaded ranker (set before the fork), never pickled
        with ProcessPoolExecutor(workers, mp_context=get_context("fork"),
                                 initializer=_Batches.adopt, initargs=(ranking,)) as pool:
            ranked = pool.map(_Batches.rank_adopted, starts)
            done = _merge(ranked, rows, scores, codes, sets, progress, total)
    else:
        done = _merge(map(ranking, starts), rows, scores, codes, sets, progress, total)
    assert done == total
    if lists_key(resources, ranker) != key:
        raise RuntimeError(f"{corpus.root}: the corpus, vectors or index changed while the "
                           "related lists were computed; run the command again")
    schema = pa.schema([("paper_id", pa.string()), ("rows", pa.list_(pa.int32(), depth)),
                        ("scores", pa.list_(pa.float32(), depth)),
                        ("signals", pa.list_(pa.int16(), depth))])
    target = lists_path(corpus, ranker)
    target.parent.mkdir(parents=True, exist_ok=True)
    metadata = {"openmsd.related_key": key, "openmsd.ranker": ranker,
                "openmsd.signal_sets": json.dumps([list(s) for s in sets])}
    with ParquetSink(target, schema, metadata) as sink:
        sink.write(pa.table({
            "paper_id": pa.array(papers.ids, pa.string()),
            "rows": pa.FixedSizeListArray.from_arrays(pa.array(rows.ravel()), depth),
            "scores": pa.FixedSizeListArray.from_arrays(pa.array(scores.ravel()), depth),
            "signals": pa.FixedSizeListArray.from_arrays(pa.array(codes.ravel()), depth)},
            schema=schema))
    return target


Batch = tuple[int, np.ndarray, np.ndarray, list[list[tuple[str, ...]]]]


@dataclass
class _Batches:
    """Ranks batches of ``batch`` papers with ``scorer``, keeping the first ``depth``."""

    scorer: Fusion
    depth: int
    batch: int

    def __call__(self, start: int) -> Batch:
        """One batch of papers from row ``start``: their results, scores and text signals."""
        scorer = self.scorer
        chunk = np.arange(start, min(start + self.batch, len(scorer.papers)))
        found, value, said = scorer.top_k_explained(Queries.of_rows(scorer.papers, chunk),
                                                    self.depth)
        words_of = member_words(scorer)
        return start, found, value, [[tuple(signals(c, words_of)) for c in results]
                                     for results in said]

    #: in a forked worker, the batches it ranks (:meth:`adopt`)
    adopted: ClassVar[_Batches | None] = None

    @staticmethod
    def adopt(ranking: _Batches) -> None:
        """A worker's initializer: rank with ``ranking`` from now on."""
        _Batches.adopted = ranking

    @staticmethod
    def rank_adopted(start: int) -> Batch:
        assert _Batches.adopted is not None
        return _Batches.adopted(start)


def _merge(ranked: Iterable[Batch], rows: np.ndarray, scores: np.ndarray, codes: np.ndarray,
           sets: dict[tuple[str, ...], int], progress: Callable[[int, int], None] | None,
           total: int) -> int:
    """Batches into the result matrices (signal sets numbered as they come); papers done."""
    done = 0
    for start, found, value, said in ranked:
        end = start + len(found)
        rows[start:end], scores[start:end] = found, value
        for i, results in enumerate(said):
            for j, words in enumerate(results):
                codes[start + i, j] = sets.setdefault(words, len(sets))
        done += len(found)
        if progress is not None:
            progress(done, total)
    return done


def _read(path: Path, key: str, ids: list[str]) -> RelatedLists | None:
    """The lists stored at ``path`` if they were computed under ``key`` for ``ids``."""
    try:
        meta = pq.read_schema(path).metadata or {}
    except (FileNotFoundError, OSError, pa.ArrowInvalid):
        return None
    if meta.get(b"openmsd.related_key", b"").decode() != key:
        return None
    table = pq.ParquetFile(path).read()
    if table["paper_id"].to_pylist() != ids:
        return None

    def matrix(column: str, dtype: type) -> np.ndarray:
        values = table[column].combine_chunks()
        return numbers(values.values).astype(dtype).reshape(len(table), values.type.list_size)

    return RelatedLists(key, matrix("rows", np.int32), matrix("scores", np.float32),
                        matrix("signals", np.int16),
                        json.loads(meta[b"openmsd.signal_sets"].decode()))


def stored_related(corpus: Corpus, ranker: str, scorer: Scorer) -> RelatedLists | None:
    """The stored lists of ``ranker`` when they hold what ``scorer`` would rank now (read
    once per key and file, kept in the corpus's search resources), else None."""
    return kept_lists(resources_of(corpus), ranker, scorer)


def kept_lists(resources: SearchResources, ranker: str, scorer: Scorer) -> RelatedLists | None:
    """:func:`stored_related`, kept in ``resources``."""
    path = lists_path(resources.corpus, ranker)
    try:
        stat = os.stat(path)
        names = [d.name for d in dense_members(scorer)]  # no directory listed per request
        stamp = (lists_key(resources, ranker, names), stat.st_ino, stat.st_mtime_ns,
                 stat.st_size)
    except (FileNotFoundError, NotADirectoryError):
        return None

    def read() -> RelatedLists | None:
        started = time.perf_counter()
        found = _read(path, stamp[0], scorer.papers.ids)
        if found is not None:
            log.info("related lists of %s read in %.1f s", ranker, time.perf_counter() - started)
        return found

    return resources.kept(("related lists", ranker), stamp, read)
