"""The vector index of a corpus for one model: FAISS, persisted beside the corpus.

``CORPUS/index/<model>/`` holds ``index.faiss`` and ``papers.parquet`` (row number ->
``paper_id``, ``text_hash``, ``language``, ``year``). Exact inner product (``IndexFlatIP``) by
default; HNSW above ``HNSW_THRESHOLD`` vectors (or when asked). Building again adds only the
papers embedded since (incremental) when every indexed vector is still current (same paper,
same text hash); otherwise the index is rebuilt from the vectors. Search takes language and
year filters, applied inside FAISS with an id selector so filtered searches still return k
results when k exist.

One build at a time: a build holds the corpus's ingest lock, and first removes the build
folders of killed builds. Crash safety: each build is written whole into its own directory
``CORPUS/index/.builds/<model>/<build id>/`` and ``CORPUS/index/<model>`` is a symbolic link
renamed onto it in one step, so a reader (or a server hot-swapping) sees the old build or the
new one, never one file of each. ``papers.parquet`` also records the CRC-32 of its
``index.faiss``, checked on load, so a copied corpus (whose link became a plain directory) or a
damaged file is never read with rows of another build.

Above what RAM holds, ``build_index(..., factory=FactoryParams("IVF65536,PQ48"))`` builds any
FAISS factory string batch by batch with on-disk inverted lists
(:mod:`openmsd.index.factory_index`); its ``nprobe`` and re-ranking depth are stored in the
manifest (``papers.parquet``'s metadata, key ``openmsd.index_factory``) and used by
:meth:`VectorIndex.search`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
import uuid
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import faiss
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from openmsd.corpus import INDEX_BUILDS, PARTS, Corpus, FilterColumns, corpus_lock
from openmsd.crashpoint import crash_point
from openmsd.index.factory_index import (
    VECTORS_FILE,
    Batches,
    FactoryParams,
    FactorySettings,
    build_factory,
    open_vectors,
    parquet_batches,
    read_ondisk,
    search_factory,
)
from openmsd.io import ParquetSink, atomic_path, refused_errno
from openmsd.models import current_hashes, load_vector_table
from openmsd.vectors import model_slug, vectors_dir

HNSW_THRESHOLD = 50_000
"""Above this many vectors ``auto`` builds HNSW: exact search costs ~8 ms a query at 50,000
512-d vectors on one core (~15 ms at 100,000), HNSW ~0.3 ms at recall@10 0.99 (docs/server.md)."""
HNSW_M = 32
BUILD_KEY = b"openmsd.index_build"
CRC_KEY = b"openmsd.index_crc32"
FACTORY_KEY = b"openmsd.index_factory"
META = pa.schema([("paper_id", pa.string()), ("text_hash", pa.string()),
                  ("language", pa.string()), ("year", pa.int32())])


def index_dir(corpus: Corpus, model: str) -> Path:
    return corpus.layout.index_dir(model_slug(model))


def new_index(dim: int, kind: str) -> faiss.Index:
    """An empty inner-product index: ``flat`` (exact) or ``hnsw`` (approximate)."""
    if kind == "flat":
        return faiss.IndexFlatIP(dim)
    if kind == "hnsw":
        index = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = 200
        index.hnsw.efSearch = 128
        return index
    raise ValueError(f"unknown index kind {kind!r}: expected flat, hnsw or auto")


def index_kind(index: faiss.Index) -> str:
    """``hnsw``, ``flat`` or ``factory`` (any other FAISS index): the kind of a built index."""
    if isinstance(index, faiss.IndexHNSWFlat):
        return "hnsw"
    return "flat" if isinstance(index, faiss.IndexFlat) else "factory"


@dataclass
class VectorIndex:
    """A FAISS index and the papers of its rows."""

    index: faiss.Index
    papers: pa.Table  # paper_id, language, year, one row per vector, in index order
    settings: FactorySettings | None = None  # a factory index's nprobe and re-ranking
    vectors: np.ndarray | None = None  # a factory index's full vectors, memory-mapped

    def vector(self, row: int) -> np.ndarray:
        """The stored vector of ``row``: exact for a factory index (not its compressed code)."""
        if self.vectors is not None:
            return np.array(self.vectors[row])
        return self.index.reconstruct(row)

    @cached_property
    def ids(self) -> list[str]:
        """The paper id of each row, listed once per index."""
        return self.papers["paper_id"].to_pylist()

    @cached_property
    def rows(self) -> dict[str, int]:
        """Each paper id's row, mapped once per index."""
        return {paper_id: row for row, paper_id in enumerate(self.ids)}

    def row(self, paper_id: str) -> int:
        """The row of ``paper_id``'s vector (ValueError when it has none)."""
        try:
            return self.rows[paper_id]
        except KeyError:
            raise ValueError(f"{paper_id!r} is not in the index") from None

    def search(self, queries: np.ndarray, k: int, languages: list[str] | None = None,
               years: tuple[int | None, int | None] | None = None,
               exclude: list[str | None] | None = None) -> list[list[tuple[str, float]]]:
        """Top-``k`` ``(paper_id, score)`` per query row, filtered by language and year range;
        ``exclude[i]`` (the query paper itself) is never a result of query ``i``."""
        if min(k + 1, self.index.ntotal) == 0:
            return [[] for _ in range(len(queries))]
        scores, rows = self.search_rows(queries, k + 1, self.allowed(languages, years))
        ids = self.ids
        results = []
        for i in range(len(queries)):
            skip = exclude[i] if exclude else None
            hits = [(ids[r], float(s)) for r, s in zip(rows[i], scores[i], strict=True)
                    if r >= 0 and ids[r] != skip]
            results.append(hits[:k])
        return results

    def search_rows(self, queries: np.ndarray, k: int, allowed: np.ndarray | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
        """FAISS's top-``k`` scores and rows (-1: none) per query row, among the rows where the
        boolean mask ``allowed`` is true (None: every row)."""
        params = None
        k = min(k, self.index.ntotal)
        queries = np.ascontiguousarray(queries, np.float32)
        if self.settings is not None and k > 0:  # a factory index: its nprobe and re-ranking
            return search_factory(self.index, queries, k, self.settings, self.vectors, allowed)
        if allowed is not None:
            bitmap = np.packbits(allowed, bitorder="little")  # alive until the search is done
            selector = faiss.IDSelectorBitmap(len(allowed), faiss.swig_ptr(bitmap))
            params = (faiss.SearchParametersHNSW(sel=selector, efSearch=max(128, 2 * k))
                      if isinstance(self.index, faiss.IndexHNSW)
                      else faiss.SearchParameters(sel=selector))
        if k == 0:
            return (np.zeros((len(queries), 0), np.float32),
                    np.zeros((len(queries), 0), np.int64))
        return self.index.search(queries, k, params=params)

    @cached_property
    def filter_columns(self) -> FilterColumns:
        """The rows' languages and years, listed once per index, not on every filtered
        search."""
        return FilterColumns.of(self.papers)

    def allowed(self, languages: list[str] | None,
                years: tuple[int | None, int | None] | None) -> np.ndarray | None:
        """Which rows ``--lang`` and ``--year`` keep (:mod:`openmsd.corpus.filters`; None:
        every row)."""
        return self.filter_columns.mask(languages, years)


@contextlib.contextmanager
def _building(corpus: Corpus) -> Iterator[None]:
    """Hold the corpus's lock (the ingest's: one writer at a time, IngestError at once when
    another holds it) and remove what killed index builds left: build folders never finished
    (no ``papers.parquet``) and link files never renamed into place."""
    corpus.check()
    with corpus_lock(corpus.root, create=False):
        corpus.layout.remove_unfinished_index_builds()
        yield


def build_index(corpus: Corpus, model: str, kind: str = "auto", full: bool = False,
                factory: FactoryParams | None = None) -> tuple[VectorIndex, int]:
    """Build or extend the index of ``model``'s vectors; returns it and how many rows it added.

    An existing index is extended when every vector it holds is still current (same paper, same
    text hash) and ``kind`` is ``auto`` or its kind; otherwise (a changed text, a removed paper,
    another kind, a damaged or unreadable index), or when ``full``, it is rebuilt from the
    vectors. With ``factory`` (or ``auto`` over an existing factory index) the factory index is
    built anew, batch by batch (:func:`build_factory_index`). One build at a time writes a
    corpus (its ingest lock: IngestError when an ingest or another build holds it)."""
    with _building(corpus):
        return _build_index(corpus, model, kind, full, factory)


def _build_index(corpus: Corpus, model: str, kind: str, full: bool,
                 factory: FactoryParams | None) -> tuple[VectorIndex, int]:
    try:
        existing: VectorIndex | None = None if factory else load_index(corpus, model)
    except (FileNotFoundError, RuntimeError, OSError, KeyError):  # none, damaged, pre-build-id
        existing = None
    if factory is None and kind == "auto" and existing is not None and existing.settings:
        factory = FactoryParams(existing.settings.factory, rerank=existing.settings.rerank,
                                k=existing.settings.k)
    if factory is not None:
        built = _build_factory_index(corpus, model, factory, None)
        return built, built.index.ntotal
    if full:
        existing = None
    ids, hashes, vectors = load_vector_table(corpus, model)
    meta = dict(_metadata(corpus))
    directory = index_dir(corpus, model)
    if existing is not None and kind not in ("auto", index_kind(existing.index)):
        existing = None  # another kind asked for: build it anew
    if existing is not None and existing.index.d == vectors.shape[1]:
        current = set(zip(ids, hashes, strict=True))
        held = list(zip(existing.ids, existing.papers["text_hash"].to_pylist(), strict=True))
        if all(pair in current for pair in held):  # only additions since: extend
            have = {paper_id for paper_id, _ in held}
            new = [i for i, paper_id in enumerate(ids) if paper_id not in have]
            if new:
                existing.index.add(vectors[new])
                rows = pa.concat_tables([existing.papers, _meta_table(
                    [ids[i] for i in new], [hashes[i] for i in new], meta)])
                existing = _save(VectorIndex(existing.index, rows), directory)
            return existing, len(new)
    if kind == "auto":
        kind = "hnsw" if len(ids) > HNSW_THRESHOLD else "flat"
    index = new_index(vectors.shape[1], kind)
    if len(ids):
        index.add(vectors)
    return _save(VectorIndex(index, _meta_table(ids, hashes, meta)), directory), len(ids)


def build_factory_index(corpus: Corpus, model: str, params: FactoryParams,
                        progress: Callable[[str, int], None] | None = None) -> VectorIndex:
    """Build ``params.factory`` over the current vectors of ``model``, read from their Parquet
    parts in batches (the newest part wins for a paper, as in ``load_vector_table``), under the
    corpus's lock."""
    with _building(corpus):
        return _build_factory_index(corpus, model, params, progress)


def _build_factory_index(corpus: Corpus, model: str, params: FactoryParams,
                         progress: Callable[[str, int], None] | None) -> VectorIndex:
    current = current_hashes(corpus, model)
    meta = dict(_metadata(corpus))
    parts = sorted(vectors_dir(corpus, model).glob(PARTS), reverse=True)
    if not parts:
        raise FileNotFoundError(f"{corpus.root}: no vectors for model {model!r}; run "
                                f"'openmsd embed {corpus.root} --model {model}' first")

    def batches() -> Iterator[tuple[pa.Table, np.ndarray]]:
        seen: set[str] = set()
        for rows, matrix in parquet_batches(parts, ["paper_id", "text_hash"]):
            ids, hashes = rows["paper_id"].to_pylist(), rows["text_hash"].to_pylist()
            keep = [i for i, (paper_id, digest) in enumerate(zip(ids, hashes, strict=True))
                    if paper_id not in seen and current.get(paper_id) == digest]
            seen.update(ids[i] for i in keep)
            if keep:
                yield (_meta_table([ids[i] for i in keep], [hashes[i] for i in keep], meta),
                       matrix[keep])

    return publish_factory(batches, params, index_dir(corpus, model), progress)


def publish_factory(batches: Batches, params: FactoryParams, directory: Path,
                    progress: Callable[[str, int], None] | None = None) -> VectorIndex:
    """Build a factory index of ``batches`` (papers rows in :data:`META`'s columns, vectors)
    into a new build of ``directory`` and swap it in."""
    return _publish(directory, lambda target: build_factory(batches, params, target, progress))


def _metadata(corpus: Corpus) -> list[tuple[str, tuple[str | None, int | None]]]:
    con = corpus.connect()
    rows = con.execute("SELECT paper_id, language, year FROM papers").fetchall()
    return [(paper_id, (language, year)) for paper_id, language, year in rows]


def _meta_table(ids: list[str], hashes: list[str],
                meta: dict[str, tuple[str | None, int | None]]) -> pa.Table:
    return pa.table({"paper_id": ids, "text_hash": hashes,
                     "language": [meta.get(i, (None, None))[0] for i in ids],
                     "year": [meta.get(i, (None, None))[1] for i in ids]}, schema=META)


def _save(built: VectorIndex, directory: Path) -> VectorIndex:
    """Write ``built`` into a new build directory and swap it in (:func:`_publish`)."""
    return _publish(directory, lambda target: (built.index, built.papers, None))


Made = tuple[faiss.Index, pa.Table, FactorySettings | None]


def _publish(directory: Path, make: Callable[[Path], Made]) -> VectorIndex:
    """Make an index in a new build directory (``make`` may write files there), write its
    ``index.faiss`` and then ``papers.parquet``, then point ``directory`` at the build in one
    rename; builds older than the one replaced are removed (a reader that resolved the
    replaced one a moment ago can still finish reading it)."""
    build = uuid.uuid4().hex[:16]
    builds = directory.parent / INDEX_BUILDS / directory.name
    target = builds / build
    target.mkdir(parents=True)
    try:
        index, papers, settings = make(target)
        meta = {BUILD_KEY: build.encode(), CRC_KEY: str(_write_index(index, target)).encode()}
        if settings is not None:
            meta[FACTORY_KEY] = settings.to_json().encode()
        crash_point("index.between_writes")
        with ParquetSink(target / "papers.parquet", META,
                         {k.decode(): v.decode() for k, v in meta.items()}) as sink:
            sink.write(papers)
    except Exception:  # a refused write, a bad factory string: the old index stays, whole
        shutil.rmtree(target, ignore_errors=True)
        raise
    crash_point("index.before_swap")
    previous = directory.resolve() if directory.is_symlink() else None
    if directory.is_dir() and not directory.is_symlink():  # a copied or older index: aside
        previous = builds / f"{uuid.uuid4().hex[:16]}"
        os.replace(directory, previous)
    link = directory.with_name(f".{directory.name}.{build}.link")
    os.symlink(os.path.relpath(target, directory.parent), link)
    os.replace(link, directory)
    for old in builds.iterdir():  # not a concurrent build still writing (no papers yet)
        if old not in (target, previous) and ((old / "papers.parquet").exists()
                                              or time.time() - old.stat().st_mtime > 3600):
            shutil.rmtree(old, ignore_errors=True)
    vectors = open_vectors(target, index.d) if settings is not None else None
    return VectorIndex(index, papers.replace_schema_metadata(meta), settings, vectors)


def _write_index(index: faiss.Index, target: Path) -> int:
    """Write ``index`` as ``target/index.faiss`` (atomically); its CRC-32. A write the machine
    refuses is an ``OSError`` naming the file (FAISS raises a RuntimeError)."""
    with atomic_path(target / "index.faiss") as tmp:
        try:
            faiss.write_index(index, str(tmp))
        except RuntimeError as error:
            code = refused_errno(str(error))
            if code is None:
                raise
            raise OSError(code, os.strerror(code), str(target / "index.faiss")) from None
        return _crc32(tmp)


def _crc32(path: Path) -> int:
    crc = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 22):
            crc = zlib.crc32(chunk, crc)
    return crc


def load_index(corpus: Corpus, model: str, mapped: bool = False) -> VectorIndex:
    """The saved index of ``model``; FileNotFoundError naming the command to run. ``mapped``:
    a flat or HNSW index's vectors memory-mapped from its file (read-only: for searching, as a
    server does; the pages are the file's, shared and given back under memory pressure), not
    copied into the process."""
    link = index_dir(corpus, model)
    directory = link.resolve()  # one build, even if a new one is swapped in meanwhile
    rebuild = f"run 'openmsd index build {corpus.root} --model {model}'"
    if not (directory / "index.faiss").exists():
        raise FileNotFoundError(f"{corpus.root}: no index for model {model!r}; {rebuild} first")
    papers = pq.ParquetFile(directory / "papers.parquet").read()
    crc = (papers.schema.metadata or {}).get(CRC_KEY)
    if crc is None:
        raise FileNotFoundError(f"{link}: an index written before build ids (its files may "
                                f"disagree); {rebuild} again")
    if int(crc) != _crc32(directory / "index.faiss"):
        raise FileNotFoundError(f"{directory}: index.faiss is not the one papers.parquet was "
                                f"written with (a damaged build?); {rebuild} again")
    factory = (papers.schema.metadata or {}).get(FACTORY_KEY)
    if factory is None:
        flags = faiss.IO_FLAG_MMAP_IFC if mapped else 0
        return VectorIndex(faiss.read_index(str(directory / "index.faiss"), flags), papers)
    index = read_ondisk(directory / "index.faiss")
    vectors = open_vectors(directory, index.d)
    if len(vectors) != index.ntotal:
        raise FileNotFoundError(f"{directory}: {VECTORS_FILE} holds {len(vectors):,} vectors, "
                                f"the index {index.ntotal:,} (a damaged build?); {rebuild} again")
    return VectorIndex(index, papers, FactorySettings.from_json(factory), vectors)
