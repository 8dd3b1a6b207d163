"""What a serving process keeps loaded: the corpus views, the encoders and the live indexes.

* :class:`ServedCorpus` opens the corpus once; each ``connect()`` is a cursor on one shared
  DuckDB database (its views read the Parquet files, so a re-ingested corpus is seen at once).
* :class:`LiveIndex` holds a model's FAISS index and swaps in a rebuilt one when its link
  points at a new build: the old index answers until the new one has loaded completely (a
  build is written whole before its link is renamed into place, and a damaged one, whose
  index and rows disagree, is not taken).
* :class:`Resources` bundles them for the application, with the corpus statistics cached and
  the corpus's :class:`~openmsd.search.SearchService` (every related, search, library and
  recommend answer goes through it; the served models answer from their live indexes), and
  loads what the service keeps per corpus build (paper records, the citation graph, the
  default rankers) at start and after a re-ingest, so that no request waits for it alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from openmsd.artifact import ArtifactError
from openmsd.corpus import MANIFEST, Corpus, CorpusError, corpus_stats
from openmsd.index import VectorIndex, index_dir, load_index
from openmsd.models import DEFAULT_MODEL, MODELS, DenseEncoder, Kind, find_adapter, load_model
from openmsd.rank import (
    DEFAULT_RANKERS,
    HYBRID,
    HYBRID_GRAPH,
    Scorer,
    dense_members,
    is_builtin,
    served_backend,
)
from openmsd.search import (
    SUMMARY,
    SearchService,
    load_citation_graph,
    load_paper_records,
    non_paper_kinds,
    paper_aliases,
    read_aliases,
    read_graph,
    read_records,
)
from openmsd.vectors import stored_backends, vector_key

log = logging.getLogger("openmsd.server")
MAX_BATCH = 64
BATCH_ENV = "OPENMSD_ENCODE_BATCH"
THREADS_ENV = "OPENMSD_THREADS"
"""Threads per query encoder (ONNX Runtime's intra-op pool, muse-v3's BLAS); ``serve``: 1."""


class ServedCorpus(Corpus):
    """A corpus whose connections are cursors on one DuckDB database, opened once."""

    def __init__(self, root: str | Path):
        super().__init__(root)
        self._database = super().connect()

    def connect(self, database: str = ":memory:") -> duckdb.DuckDBPyConnection:
        return self._database.cursor()


def _stamp(directory: Path) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The build an index link points at, and its files' times and sizes."""
    build = directory.resolve()
    files = [build / "index.faiss", build / "papers.parquet"]
    return str(build), tuple((f.stat().st_mtime_ns, f.stat().st_size) if f.exists() else (0, 0)
                             for f in files)


class LiveIndex:
    """The current index of one model, replaced by a rebuilt one once that is complete."""

    def __init__(self, corpus: Corpus, model: str):
        self.corpus, self.model = corpus, model
        self.directory = index_dir(corpus, model)
        self._stamp = _stamp(self.directory)
        self.current = self._load()
        self.reloads = 0

    def _load(self) -> VectorIndex:
        loaded = load_index(self.corpus, self.model, mapped=True)
        loaded.rows, loaded.filter_columns  # listed now, not by the first request  # noqa: B018
        return loaded

    def refresh(self) -> bool:
        """Load the index again if its files changed and are consistent; True if swapped."""
        stamp = _stamp(self.directory)
        if stamp == self._stamp:
            return False
        try:
            fresh = self._load()
        except (FileNotFoundError, RuntimeError, OSError):
            return False  # a build in progress: keep answering with the old index
        if _stamp(self.directory) != stamp:
            return False  # changed while loading: try again on the next poll
        self.current, self._stamp = fresh, stamp
        self.reloads += 1
        return True


class BatchingEncoder:
    """An encoder shared by concurrent requests: their texts are encoded together.

    One worker thread owns the encoder (not every backend is thread-safe). Each call queues its
    texts and waits; the worker takes every call queued meanwhile (waiting up to ``wait_s`` for
    more, at most ``max_batch`` texts) and encodes them in one forward pass per kind, so 20
    concurrent searches cost about one batch, not 20 single queries in a row.
    ``$OPENMSD_ENCODE_BATCH`` sets ``max_batch`` (1: one call at a time, no batching)."""

    def __init__(self, encoder: DenseEncoder, max_batch: int | None = None,
                 wait_s: float = 0.002):
        self.encoder, self.name, self.dim = encoder, encoder.name, encoder.dim
        self.max_batch = max_batch or int(os.environ.get(BATCH_ENV, MAX_BATCH))
        self.wait_s = wait_s if self.max_batch > 1 else 0.0
        self.batches = 0  # forward passes run, for tests and benchmarks
        self.texts = 0  # texts encoded in them
        self.waited_s = 0.0  # seconds the calls spent queued before their batch started
        self.calls = 0
        self._queue: queue.Queue[_Call] = queue.Queue()
        self._worker = threading.Thread(target=self._run, name=f"encode-{self.name}",
                                        daemon=True)
        self._worker.start()

    def encode(self, texts: Sequence[str], kind: Kind = "passage",
               batch_size: int = 32) -> np.ndarray:
        call = _Call(list(texts), kind)
        self._queue.put(call)
        call.done.wait()
        if call.error is not None:
            raise call.error
        assert call.result is not None
        return call.result

    async def encode_async(self, texts: Sequence[str], kind: Kind = "passage") -> np.ndarray:
        """:meth:`encode` for a coroutine: the event loop goes on while the texts wait for
        their batch (no pool thread is held, no thread hop)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[np.ndarray] = loop.create_future()
        self._queue.put(_Call(list(texts), kind, future=future, loop=loop))
        return await future

    def _run(self) -> None:
        while True:
            calls = [self._queue.get()]
            size = len(calls[0].texts)
            deadline = time.monotonic() + self.wait_s
            while size < self.max_batch:
                try:
                    call = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
                calls.append(call)
                size += len(call.texts)
            for kind in dict.fromkeys(c.kind for c in calls):
                self._encode([c for c in calls if c.kind == kind], kind)

    def _encode(self, calls: list[_Call], kind: Kind) -> None:
        texts = [t for c in calls for t in c.texts]
        now = time.monotonic()
        self.waited_s += sum(now - c.queued for c in calls)
        self.calls += len(calls)
        try:
            vectors = np.asarray(self.encoder.encode(texts, kind, max(len(texts), 1)))
            self.batches += 1
            self.texts += len(texts)
        except Exception as error:  # each caller gets the error of its batch
            for call in calls:
                call.finish(None, error)
            return
        start = 0
        for call in calls:
            call.finish(vectors[start:start + len(call.texts)], None)
            start += len(call.texts)


@dataclass
class _Call:
    """Texts waiting for their batch; a thread waits on ``done``, a coroutine on ``future``."""

    texts: list[str]
    kind: Kind
    result: np.ndarray | None = None
    error: Exception | None = None
    done: threading.Event = field(default_factory=threading.Event)
    future: asyncio.Future[np.ndarray] | None = None
    loop: asyncio.AbstractEventLoop | None = None
    queued: float = field(default_factory=time.monotonic)

    def finish(self, result: np.ndarray | None, error: Exception | None) -> None:
        """Hand the caller its rows, or the error of its batch."""
        self.result, self.error = result, error
        if self.future is not None and self.loop is not None:
            # a closed event loop (the server stopped) has no one waiting
            with contextlib.suppress(RuntimeError):
                self.loop.call_soon_threadsafe(_settle, self.future, result, error)
        self.done.set()


def _settle(future: asyncio.Future[np.ndarray], result: np.ndarray | None,
            error: Exception | None) -> None:
    if future.done():  # the request was cancelled (its client went away)
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class Resources:
    """The corpus, the models served (the first is the default) with their indexes and
    encoders, and the cached statistics; :meth:`watch` polls the indexes for rebuilds."""

    def __init__(self, corpus: str | Path, models: list[str], backend: str | None = None):
        if not models:
            raise ValueError("serve: name at least one model")
        self.corpus = ServedCorpus(corpus)
        self.models = list(dict.fromkeys(models))
        # each model's index and query encoder: of the backend asked for, else of the backend
        # its vectors were made with
        self.backends = {m: served_backend(self.corpus, m, backend) for m in self.models}
        self.indexes = {m: LiveIndex(self.corpus, vector_key(m, self.backends[m]))
                        for m in self.models}
        #: the rankers served beside the models' indexes; related and search default to them
        self.rankers = [HYBRID_GRAPH, HYBRID, "bm25"]
        self.related_ranker, self.search_ranker = (DEFAULT_RANKERS["related"],
                                                   DEFAULT_RANKERS["search"])
        #: each served model's vector key: the ranker a question naming it is answered with
        self.keys = {m: vector_key(m, self.backends[m]) for m in self.models}
        self._models_of = {key: m for m, key in self.keys.items()}  # a vector key's model
        #: every answer's one way through, the command line's: the served models read their
        #: live indexes and batching encoders
        self.search = SearchService(self.corpus)
        for m in self.models:
            self.search.serve_model(self.keys[m], lambda m=m: self.index(m),
                                    lambda m=m: self.encoder(m))
        self._encoders: dict[str, BatchingEncoder] = {}
        self._lock = threading.Lock()
        self._stats: tuple[int, dict[str, Any]] | None = None
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    @property
    def default_model(self) -> str:
        return self.models[0]

    def ranker(self, name: str) -> str:
        """The ranker a question naming ``name`` (a served model or ranker) is answered with:
        a served model's vector key, a ranker as it is."""
        return self.keys.get(name, name)

    def encoder(self, model: str) -> BatchingEncoder:
        """The query encoder of a served model, loaded on first use."""
        with self._lock:
            if model not in self._encoders:
                if is_builtin(model):
                    raise ValueError(f"model {model!r} is not a dense model: serve a dense "
                                     "model (rankers are served beside it)")
                # an adapter of the corpus by name: its directory (bases, then its head)
                source = str(find_adapter(model, self.corpus) or model)
                self._encoders[model] = BatchingEncoder(load_model(source,
                                                                   self.backends[model]))
            return self._encoders[model]

    def index(self, model: str) -> VectorIndex:
        return self.indexes[model].current

    def encoded(self) -> dict[str, dict[str, float]]:
        """Per loaded query encoder: the texts it encoded, in how many forward passes, and how
        many calls waited how many seconds in all for their batch to start."""
        return {m: {"texts": e.texts, "batches": e.batches, "calls": e.calls,
                    "waited_s": round(e.waited_s, 3)} for m, e in self._encoders.items()}

    def stats(self) -> dict[str, Any]:
        """``corpus_stats`` of the corpus, computed again only after an ingest."""
        stamp = (self.corpus.root / MANIFEST).stat().st_mtime_ns
        if self._stats is None or self._stats[0] != stamp:
            self._stats = (stamp, corpus_stats(self.corpus))
        return self._stats[1]

    def warm(self) -> None:
        """Load the current build's paper records, the records that are not papers, citation
        graph and default rankers (at once when already loaded; after a re-ingest, the new
        build's)."""
        records = load_paper_records(self.corpus)
        non_paper_kinds(self.corpus)
        for name in SUMMARY:  # what a search or related answer shows of each result
            records.column(name)
        paper_aliases(self.corpus)
        load_citation_graph(self.corpus)
        for ranker in (self.related_ranker, self.search_ranker, *self.keys.values()):
            try:
                self.search.scorer(ranker)
            except ArtifactError as error:  # its requests answer 503 with this line
                log.error("%s: %s", ranker, error)
        for model in self.models:  # the first free text waits for no model load
            self.encoder(model)

    async def query_vectors(self, ranker: Scorer, text: str) -> dict[str, np.ndarray]:
        """``text``'s query vector for each dense member of ``ranker`` (a scorer of
        :meth:`openmsd.search.SearchService.scorer`) that is a served model, from its
        batching encoder (by member name, as the ranker's members read them)."""
        out = {}
        for member in dense_members(ranker):
            model = self._models_of.get(member.name)
            if model is not None and member.name not in out:
                vector = await self.encoder(model).encode_async([text], "query")
                out[member.name] = np.asarray(vector, np.float32)
        return out

    def warmed(self) -> bool:
        """Whether what :meth:`warm` loads is loaded for the current build (then a paper or
        its related papers are answered in about a millisecond, without waiting for a load)."""
        kept = self.search.resources
        return (kept.has_table("papers", read_records)
                and kept.has_table("papers", read_aliases)
                and kept.has_table("citations", read_graph)
                and self.search.built(self.related_ranker) is not None)

    def languages(self) -> list[str]:
        """The corpus languages, most papers first."""
        return [lang for lang in self.stats()["languages"] if lang != "und"]

    def watch(self, every_s: float = 2.0) -> None:
        """Start polling the indexes for rebuilds, and the corpus for a new build, in a
        daemon thread."""
        def loop() -> None:
            while not self._stop.wait(every_s):
                for live in self.indexes.values():
                    live.refresh()
                try:
                    self.warm()
                except (CorpusError, OSError) as error:  # an ingest in progress: next time
                    log.info("not loaded yet: %s", error)
        self._stop.clear()
        self._watcher = threading.Thread(target=loop, name="openmsd-index-watch", daemon=True)
        self._watcher.start()

    def close(self) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(timeout=5)


def indexed_models(corpus: str | Path) -> list[str]:
    """The registered models that have an index in ``corpus``, the default model first."""
    found = [m for m in MODELS if stored_backends(Corpus(corpus), m, "index")]
    return sorted(found, key=lambda m: m != DEFAULT_MODEL)
