"""An approximate index from any FAISS factory string, built batch by batch in bounded memory.

For corpora too large for flat or HNSW in RAM (``openmsd index build --factory "IVF65536,PQ48"``):

1. a seeded sample of the vectors is drawn in one streaming pass (each row gets a seeded random
   key; the smallest keys are kept): ``train`` rows to train the index, ``calibration`` other
   rows to choose ``nprobe``;
2. the index is trained on the sample;
3. a second pass adds the vectors batch by batch: for IVF indexes into a fresh copy of the
   trained index per shard of ``shard_rows`` rows, each shard written to disk, merged at the end
   into one ``OnDiskInvertedLists`` file (``faiss.contrib.ondisk``), so memory holds one shard's
   codes, never the whole index. The full vectors are appended to ``vectors.f32`` (row order) for
   exact re-ranking and for ``VectorIndex.vector``; they stay on disk (memory-mapped). The same
   pass keeps the exact top-k of every calibration row;
4. ``nprobe`` is the smallest power of two whose recall@k against exact, over the calibration
   rows (each searched as a query, itself left out, as ``related`` does), reaches
   ``target_recall``; the curve and the choice are stored in the manifest and used when serving.

The build directory then holds ``index.faiss`` (trained quantizers and the list offsets),
``index.ivfdata`` (the inverted lists, memory-mapped when loaded), ``vectors.f32`` and
``papers.parquet`` (rows' papers, written last, with the build id, the CRC of ``index.faiss`` and
the manifest), and is published by the caller's one-rename swap, as every index build is.
"""

from __future__ import annotations

import json
import mmap
import os
import shutil
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import faiss
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from faiss.contrib.ondisk import merge_ondisk

from openmsd.crashpoint import crash_point

__all__ = ["EXAMPLES", "IVFDATA_FILE", "VECTORS_FILE", "FactoryParams", "FactorySettings",
           "RowFile", "build_factory", "check_factory", "open_vectors", "parquet_batches",
           "read_ondisk", "search_factory"]

EXAMPLES = ("IVF4096,PQ48", "IVF65536,PQ48", "IVF16384_HNSW32,PQ48", "OPQ48,IVF8192,PQ48",
            "IVF4096,SQ8", "IVF1024,Flat", "HNSW32,Flat", "PQ48")
"""Factory strings that build for 384-d vectors (PQ's M must divide the dimension)."""
VECTORS_FILE = "vectors.f32"
IVFDATA_FILE = "index.ivfdata"

Batches = Callable[[], Iterable[tuple[pa.Table, np.ndarray]]]
"""Called once per pass: (papers rows, float32 matrix) batches, the same rows in the same order
on every call."""


@dataclass
class FactoryParams:
    """How to build: the factory string, sample sizes, shard size, re-ranking, target recall."""

    factory: str
    train: int = 100_000
    calibration: int = 500
    seed: int = 0
    shard_rows: int = 1_000_000
    rerank: int = 100
    target_recall: float = 0.95
    k: int = 10
    niter: int = 10


@dataclass
class FactorySettings:
    """What serving needs, stored in the manifest: the factory, ``nprobe``, the re-ranking depth,
    and the calibration it came from (recall@k per nprobe tried)."""

    factory: str
    nprobe: int
    rerank: int
    recall: float
    k: int
    calibration_rows: int
    train_rows: int
    curve: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str | bytes) -> FactorySettings:
        return cls(**json.loads(text))


def check_factory(factory: str, dim: int) -> faiss.Index:
    """An empty inner-product index of ``factory``; ValueError with FAISS's own message and
    examples when FAISS cannot build it."""
    try:
        return faiss.index_factory(dim, factory, faiss.METRIC_INNER_PRODUCT)
    except RuntimeError as error:
        message = str(error).strip().splitlines()[-1]
        raise ValueError(f"FAISS cannot build index factory {factory!r} for {dim}-d vectors: "
                         f"{message}. Examples: {', '.join(EXAMPLES)} (see the FAISS wiki, "
                         "'The index factory')") from None


def _ivf(index: faiss.Index) -> faiss.IndexIVF | None:
    try:
        return faiss.extract_index_ivf(index)
    except RuntimeError:
        return None


def _sample(batches: Batches, size: int, seed: int) -> tuple[int, int, np.ndarray, np.ndarray]:
    """One pass: (rows, dim, rows' numbers sorted by key, their vectors): the ``size`` rows with
    the smallest seeded random keys, drawn without knowing the row count in advance. Once
    ``size`` rows are held, a batch's rows enter only below the largest key held, so memory
    stays at ~``size`` rows and the pass copies few of them (``size / rows`` of a batch)."""
    rng = np.random.default_rng(seed)
    keys = np.zeros(0)
    rows = np.zeros(0, np.int64)
    kept: list[np.ndarray] = []
    total, dim, limit = 0, 0, np.inf
    for _, matrix in batches():
        dim = matrix.shape[1]
        batch_keys = rng.random(len(matrix))
        enter = np.flatnonzero(batch_keys < limit)
        keys = np.concatenate([keys, batch_keys[enter]])
        rows = np.concatenate([rows, enter + total])
        kept.append(np.array(matrix[enter], np.float32))
        if len(keys) > size:
            keep = np.sort(np.argpartition(keys, size)[:size])
            matrix_kept = np.vstack(kept)[keep]
            keys, rows, kept = keys[keep], rows[keep], [matrix_kept]
            limit = keys.max()
        total += len(matrix)
    order = np.argsort(keys)
    sample = np.vstack(kept)[order] if kept else np.zeros((0, dim), np.float32)
    return total, dim, rows[order], sample


class _TopK:
    """The running exact top-``k`` rows of some queries over batches of the base."""

    def __init__(self, queries: np.ndarray, k: int):
        self.queries, self.k = queries, k
        self.scores = np.full((len(queries), k), -np.inf, np.float32)
        self.rows = np.full((len(queries), k), -1, np.int64)

    def add(self, matrix: np.ndarray, first_row: int) -> None:
        if not len(self.queries):
            return
        scores = self.queries @ matrix.T
        take = min(self.k, matrix.shape[0])
        best = np.argpartition(-scores, take - 1, axis=1)[:, :take]
        both = np.hstack([self.scores, np.take_along_axis(scores, best, 1)])
        rows = np.hstack([self.rows, best + first_row])
        keep = np.argsort(-both, axis=1)[:, :self.k]
        self.scores = np.take_along_axis(both, keep, 1)
        self.rows = np.take_along_axis(rows, keep, 1)


def build_factory(batches: Batches, params: FactoryParams, target: Path,
                  progress: Callable[[str, int], None] | None = None
                  ) -> tuple[faiss.Index, pa.Table, FactorySettings]:
    """Build ``params.factory`` over ``batches`` into the (new, empty) build directory
    ``target``; returns the loaded index, its papers rows and the settings chosen. Writes
    ``index.faiss``, ``index.ivfdata`` (IVF), ``vectors.f32``; not ``papers.parquet``."""
    progress = progress or (lambda stage, rows: None)
    progress("sample", 0)
    total, dim, sample_rows, sample = _sample(batches, params.train + params.calibration,
                                              params.seed)
    if total == 0:
        raise ValueError("no vectors to index")
    index = check_factory(params.factory, dim)
    ivf = _ivf(index)
    calibration = min(params.calibration, max(0, total - 1))
    held_rows, held = sample_rows[:calibration], sample[:calibration]
    train = sample[calibration:] if total - calibration >= 1000 else sample
    if not index.is_trained:
        if ivf is not None:
            ivf.cp.niter = params.niter
            pq = faiss.downcast_index(ivf)
            if isinstance(pq, faiss.IndexIVFPQ):
                pq.do_polysemous_training = False  # hours at scale; not used by search
                pq.pq.cp.niter = params.niter
            if len(train) < ivf.nlist:
                raise ValueError(f"{params.factory}: {ivf.nlist:,} inverted lists need at least "
                                 f"as many training vectors, the corpus has {len(train):,}")
        progress("train", len(train))
        index.train(train)
    del sample, train
    crash_point("index.factory_trained")
    truth = _TopK(held, params.k + 1)
    shards_dir = target / ".shards"
    shards: list[str] = []
    shard = faiss.clone_index(index) if ivf is not None else index
    papers = []
    row = 0
    with open(target / VECTORS_FILE, "wb") as vectors_out:
        for rows, matrix in batches():
            matrix = np.ascontiguousarray(matrix, np.float32)
            ids = np.arange(row, row + len(matrix), dtype=np.int64)
            if ivf is not None:
                shard.add_with_ids(matrix, ids)
            else:
                shard.add(matrix)
            truth.add(matrix, row)
            matrix.tofile(vectors_out)
            papers.append(rows)
            row += len(matrix)
            progress("add", len(matrix))
            if ivf is not None and shard.ntotal >= params.shard_rows:
                shards.append(_write_shard(shard, shards_dir, len(shards)))
                shard = faiss.clone_index(index)
    if row != total:
        raise RuntimeError(f"the vectors changed during the build ({total:,} then {row:,} rows)")
    if ivf is not None:
        if shard.ntotal:
            shards.append(_write_shard(shard, shards_dir, len(shards)))
        del shard
        progress("merge", len(shards))
        merge_ondisk(index, shards, str(target / IVFDATA_FILE))
        shutil.rmtree(shards_dir, ignore_errors=True)
    vectors = RowFile(target / VECTORS_FILE, dim)  # read, not mapped: see RowFile
    progress("calibrate", len(held))
    settings = _calibrate(index, vectors, held, held_rows, truth.rows, params, len(sample_rows))
    progress("write", row)
    return index, pa.concat_tables(papers), settings


def _write_shard(shard: faiss.Index, directory: Path, number: int) -> str:
    directory.mkdir(exist_ok=True)
    path = directory / f"shard-{number:05d}.index"
    faiss.write_index(shard, str(path))
    return str(path)


def _calibrate(index: faiss.Index, vectors: np.ndarray | RowFile, held: np.ndarray,
               held_rows: np.ndarray, truth: np.ndarray, params: FactoryParams, sampled: int
               ) -> FactorySettings:
    """nprobe (powers of two) and the re-ranking depth reaching ``params.target_recall``: nprobe
    grows while recall@k does; where it stops growing (the re-ranking depth limits: the true
    neighbours are not among the candidates) the depth doubles, up to 8x ``params.rerank``. The
    first setting reaching the target wins, else the best one seen; recall@k of every setting
    tried is kept (``"nprobe/rerank"``)."""
    ivf = _ivf(index)
    settings = FactorySettings(params.factory, 0, params.rerank, float("nan"), params.k,
                               len(held), sampled - len(held))
    if not len(held):
        return settings
    exact = [[r for r in t if r != own][:params.k] for t, own in zip(truth, held_rows,
                                                                      strict=True)]
    probes = [0] if ivf is None else [2**i for i in range(ivf.nlist.bit_length())
                                      if 2**i <= ivf.nlist]

    def measure(nprobe: int, rerank: int) -> float:
        settings.nprobe, settings.rerank = nprobe, rerank
        _, found = search_factory(index, held, params.k + 1, settings, vectors)
        hits = sum(len(set(f[f != own][:params.k].tolist()) & set(e))
                   for f, own, e in zip(found, held_rows, exact, strict=True))
        recall = hits / max(1, sum(len(e) for e in exact))
        settings.curve[f"{nprobe}/{rerank}"] = round(recall, 4)
        return recall

    best = (-1.0, probes[0], params.rerank)
    step, rerank, previous = 0, params.rerank, -1.0
    while True:
        recall = measure(probes[step], rerank)
        if recall > best[0]:
            best = (recall, probes[step], rerank)
        if recall >= params.target_recall:
            break
        if recall - previous < 0.002 or step + 1 == len(probes):  # nprobe no longer helps
            if not rerank or rerank >= 8 * params.rerank or vectors is None:
                break
            rerank *= 2
        else:
            step += 1
        previous = recall
    settings.recall, settings.nprobe, settings.rerank = best
    return settings


def read_ondisk(path: Path) -> faiss.Index:
    """Read an index whose inverted lists file lies beside it (wherever the directory was
    copied to); FAISS's note that it re-pointed the file is kept off stdout."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            return faiss.read_index(str(path), faiss.IO_FLAG_ONDISK_SAME_DIR)
    finally:
        os.dup2(saved, 1)
        os.close(saved)


class RowFile:
    """Rows of a float32 matrix file read on demand with ``pread`` (``rows[indices]``): the
    build's calibration reads its candidates this way rather than through a map, whose
    fault-around maps ~64 KiB of page cache around every row read, which counts in the
    process's RSS (at 1M vectors the calibration's re-ranking had mapped the whole 1.5 GB file)."""

    def __init__(self, path: Path, dim: int):
        self.path, self.dim = path, dim
        self.shape = (path.stat().st_size // (4 * dim), dim)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows: np.ndarray) -> np.ndarray:
        size = 4 * self.dim
        out = np.empty((len(rows), self.dim), np.float32)
        view = memoryview(out).cast("B")
        with open(self.path, "rb", buffering=0) as file:
            for i, row in enumerate(np.asarray(rows, np.int64).tolist()):
                if os.preadv(file.fileno(), [view[i * size:(i + 1) * size]], row * size) != size:
                    raise IndexError(f"{self.path}: row {row} is past the end")
        return out


def open_vectors(directory: Path, dim: int) -> np.ndarray:
    """The full vectors of a factory build, memory-mapped read-only (rows x dim float32) and
    advised random access (re-ranking reads scattered rows: no read-ahead from disk around
    them; the pages already cached around a row are still mapped, see :class:`RowFile`)."""
    path = directory / VECTORS_FILE
    rows = path.stat().st_size // (4 * dim)
    if rows == 0:
        return np.zeros((0, dim), np.float32)
    with open(path, "rb") as file:
        mapped = mmap.mmap(file.fileno(), rows * dim * 4, access=mmap.ACCESS_READ)
    mapped.madvise(mmap.MADV_RANDOM)
    return np.frombuffer(mapped, np.float32).reshape(rows, dim)


def search_factory(index: faiss.Index, queries: np.ndarray, k: int, settings: FactorySettings,
                   vectors: np.ndarray | RowFile | None, allowed: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` (scores, rows) of each query among the ``allowed`` rows (all when None):
    ``settings.rerank`` candidates from the index at ``settings.nprobe`` (raised while a
    filtered search finds fewer than ``k``), re-scored exactly from ``vectors`` when re-ranking
    is on. A filter allowing no more rows than the probed lists hold on average is searched
    exactly over those rows instead (an IVF scan would find few of them)."""
    ivf = _ivf(index)
    nprobe = settings.nprobe
    if allowed is not None and vectors is not None:
        chosen = np.flatnonzero(allowed)
        scanned = index.ntotal * nprobe / ivf.nlist if ivf is not None else 0
        if len(chosen) <= max(scanned, 4 * k):
            return _exact(queries, chosen, vectors, k)
    selector = None
    if allowed is not None:
        bitmap = np.packbits(allowed, bitorder="little")  # alive until the search is done
        selector = faiss.IDSelectorBitmap(len(allowed), faiss.swig_ptr(bitmap))
    fetch = max(k, settings.rerank) if settings.rerank and vectors is not None else k
    fetch = min(fetch, index.ntotal)
    while True:
        scores, rows = index.search(queries, fetch, params=_params(ivf, nprobe, selector))
        short = (rows[:, :k] < 0).any()
        if not short or selector is None or ivf is None or nprobe >= ivf.nlist:
            break
        nprobe = min(ivf.nlist, nprobe * 4)
    if fetch > k and vectors is not None:
        scores, rows = _rerank(queries, rows, vectors, k)
    return scores[:, :k], rows[:, :k]


def _exact(queries: np.ndarray, chosen: np.ndarray, vectors: np.ndarray | RowFile, k: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-``k`` among the ``chosen`` rows (padded with -1 rows)."""
    scores = queries @ np.asarray(vectors[chosen]).T
    take = min(k, len(chosen))
    order = np.argsort(-scores, axis=1)[:, :take]
    pad = ((0, 0), (0, k - take))
    return (np.pad(np.take_along_axis(scores, order, 1), pad, constant_values=-np.inf),
            np.pad(chosen[order], pad, constant_values=-1))


def _params(ivf: faiss.IndexIVF | None, nprobe: int, selector: faiss.IDSelector | None
            ) -> faiss.SearchParameters | None:
    if ivf is None:
        return faiss.SearchParameters(sel=selector) if selector is not None else None
    params = faiss.SearchParametersIVF(nprobe=nprobe, max_codes=0)
    if selector is not None:
        params.sel = selector
    if isinstance(ivf.quantizer, faiss.IndexHNSW):
        params.quantizer_params = faiss.SearchParametersHNSW(efSearch=max(64, 2 * nprobe))
    return params


def _rerank(queries: np.ndarray, rows: np.ndarray, vectors: np.ndarray | RowFile, k: int
            ) -> tuple[np.ndarray, np.ndarray]:
    """Rows re-ordered by their exact inner product with the query (read from ``vectors``)."""
    wanted = np.unique(rows[rows >= 0])
    block = np.asarray(vectors[wanted])  # sorted rows: one pass over the memory map
    position = np.searchsorted(wanted, np.maximum(rows, 0))
    exact = np.einsum("qd,qcd->qc", queries, block[position])
    exact[rows < 0] = -np.inf
    order = np.argsort(-exact, axis=1)[:, :k]
    return np.take_along_axis(exact, order, 1), np.take_along_axis(rows, order, 1)


def parquet_batches(paths: list[Path], columns: list[str], batch_rows: int = 65_536
                    ) -> Iterator[tuple[pa.Table, np.ndarray]]:
    """(papers rows, vectors) batches from Parquet files with a fixed-size-list ``vector``
    column, read ``batch_rows`` at a time."""
    for path in paths:  # no pre-buffering: it held ~2 GB of a 1.5 GB file at once
        parquet = pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)
        for batch in parquet.iter_batches(batch_rows, columns=[*columns, "vector"]):
            vector = batch.column("vector")
            matrix = np.asarray(vector.flatten()).reshape(len(batch), -1)
            yield pa.Table.from_batches([batch.drop_columns(["vector"])]), matrix
