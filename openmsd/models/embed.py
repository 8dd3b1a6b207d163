"""``openmsd embed CORPUS --model M``: paper vectors stored beside the corpus, resumable.

Vectors live in ``CORPUS/vectors/<model>/part-NNNNN.parquet`` (``paper_id``, ``text_hash``,
``vector``), one part per chunk of papers, each written atomically. A paper is embedded only
when no part holds its current ``(paper_id, text_hash)``: an interrupted run resumes where it
stopped, and a paper whose title or abstract did not change is never embedded twice. Papers
with no text are counted and left without a vector.

A model name ``MODEL+METHODLENGTH`` (``e5-small-multilingual+llm64``, see
:mod:`openmsd.enrich.store`) stores and loads vectors of the enriched text
``Title: ... Abstract: (English summary) ...`` of ``openmsd enrich``'s summaries.

Vectors are keyed by model *and* backend (:func:`vector_key`): ``e5-small-multilingual`` holds
the torch vectors, ``e5-small-multilingual@onnx`` the ONNX Runtime int8 ones, so the two are
never mixed in one store or index; :func:`choose_backend` re-uses what a corpus already has.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from openmsd.corpus.store import Corpus
from openmsd.enrich.store import summaries_for_model
from openmsd.io import ParquetSink, arrow_reader
from openmsd.models.encoder import DenseEncoder
from openmsd.models.formatting import paper_input

CHUNK = 2048
VECTORS = "vectors"
MAX_TEXT_CHARS = 8192
"""A paper's text is cut to this many characters before tokenising: no model served reads
past 512 tokens, which is at most a few thousand characters of any language; the cut keeps a
50 MB abstract from costing gigabytes in the tokeniser."""


def model_slug(name: str) -> str:
    """A directory name for a model: its registry name, or a readable hash of a path or hub name."""
    if re.fullmatch(r"[A-Za-z0-9._+@-]+", name):  # '+': enriched, MODEL+llm64; '@': backend
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:10]
    tail = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(name).name or name).strip("-")
    return f"{tail}-{digest}"


def vector_key(model: str, backend: str = "torch") -> str:
    """The name a model's vectors and index are stored under for a backend.

    >>> vector_key("e5-small-multilingual"), vector_key("e5-small-multilingual", "onnx")
    ('e5-small-multilingual', 'e5-small-multilingual@onnx')
    """
    return model if backend == "torch" else f"{model}@{backend}"


def model_name(key: str) -> str:
    """The model of a :func:`vector_key` (the key without its backend)."""
    return key.partition("@")[0]


def stored_backends(corpus: Corpus, model: str, what: str = "vectors") -> list[str]:
    """The backends whose vectors (``what="vectors"``) or index (``"index"``) of ``model``
    ``corpus`` holds, the most recently written first."""
    from openmsd.models.registry import BACKENDS

    pattern = "part-*.parquet" if what == "vectors" else "index.faiss"
    found = []
    for backend in BACKENDS:
        files = list((corpus.root / what / model_slug(vector_key(model, backend))).glob(pattern))
        if files:
            found.append((max(f.stat().st_mtime_ns for f in files), backend))
    return [backend for _, backend in sorted(found, reverse=True)]


def choose_backend(corpus: Corpus, model: str, backend: str | None = None,
                   what: str = "vectors") -> str:
    """``backend`` when given; else the backend of the vectors (or index) ``corpus`` already
    has for ``model`` (the newest), else the model's default backend."""
    from openmsd.models.registry import default_backend

    if backend is not None:
        return backend
    stored = stored_backends(corpus, model, what)
    return stored[0] if stored else default_backend(model)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def embed_text(title: str | None, abstract: str | None, summary: str | None = None) -> str:
    """The text a paper is embedded from: :func:`paper_input`, cut to :data:`MAX_TEXT_CHARS`."""
    return paper_input(title and title[:MAX_TEXT_CHARS], abstract and abstract[:MAX_TEXT_CHARS],
                       summary)[:MAX_TEXT_CHARS]


def vectors_dir(corpus: Corpus, model: str) -> Path:
    return corpus.root / VECTORS / model_slug(model)


def vector_schema(dim: int) -> pa.Schema:
    return pa.schema([("paper_id", pa.string()), ("text_hash", pa.string()),
                      ("vector", pa.list_(pa.float32(), dim))],
                     metadata={"openmsd.table": "vectors"})


@dataclass
class EmbedResult:
    """What a run did: papers embedded now, already there, and without text."""

    model: str
    embedded: int
    cached: int
    no_text: int
    directory: str


def _papers(corpus: Corpus, paper_ids: Collection[str] | None = None
            ) -> Iterator[pa.RecordBatch]:
    """The papers (``paper_id``, ``title``, ``abstract``) in id order, or only ``paper_ids``."""
    con = corpus.connect()
    where = ""
    if paper_ids is not None:
        con.register("chosen", pa.table({"paper_id": pa.array(sorted(paper_ids), pa.string())}))
        where = "WHERE paper_id IN (SELECT paper_id FROM chosen)"
    yield from arrow_reader(con, f"SELECT paper_id, title, abstract FROM papers {where} "
                                 "ORDER BY paper_id", CHUNK)


def _known(directory: Path) -> set[tuple[str, str]]:
    if not any(directory.glob("part-*.parquet")):
        return set()
    glob = str(directory / "part-*.parquet").replace("'", "''")
    rows = duckdb.sql(f"SELECT paper_id, text_hash FROM read_parquet('{glob}')").fetchall()
    return set(rows)


def embed_corpus(corpus: Corpus, encoder: DenseEncoder, model: str | None = None,
                 batch_size: int = 32, progress: Callable[[int], None] | None = None,
                 paper_ids: Collection[str] | None = None) -> EmbedResult:
    """Embed every paper of ``corpus`` (or only those of ``paper_ids``) whose current text has
    no vector yet."""
    corpus.check()
    name = model or encoder.name
    directory = vectors_dir(corpus, name)
    directory.mkdir(parents=True, exist_ok=True)
    known = _known(directory)
    summaries = summaries_for_model(corpus, model_name(name))  # MODEL+METHODLENGTH: enriched
    next_part = len(list(directory.glob("part-*.parquet")))
    embedded = cached = no_text = 0
    for batch in _papers(corpus, paper_ids):
        ids, texts, hashes = [], [], []
        for paper_id, title, abstract in zip(batch["paper_id"].to_pylist(),
                                             batch["title"].to_pylist(),
                                             batch["abstract"].to_pylist(), strict=True):
            text = embed_text(title, abstract, summaries.get(paper_id))
            if not text:
                no_text += 1
                continue
            digest = text_hash(text)
            if (paper_id, digest) in known:
                cached += 1
                continue
            ids.append(paper_id)
            texts.append(text)
            hashes.append(digest)
        if progress:
            progress(batch.num_rows - len(ids))
        if not ids:
            continue
        vectors = []
        for start in range(0, len(texts), batch_size):
            vectors.append(encoder.encode(texts[start:start + batch_size], "passage",
                                          batch_size))
            if progress:
                progress(len(texts[start:start + batch_size]))
        matrix = np.vstack(vectors).astype(np.float32)
        schema = vector_schema(matrix.shape[1])
        table = pa.table({"paper_id": ids, "text_hash": hashes,
                          "vector": pa.FixedSizeListArray.from_arrays(matrix.reshape(-1),
                                                                      matrix.shape[1])},
                         schema=schema)
        with ParquetSink(directory / f"part-{next_part:05d}.parquet", schema) as sink:
            sink.write(table)
        next_part += 1
        embedded += len(ids)
    return EmbedResult(name, embedded, cached, no_text, str(directory))


def load_vectors(corpus: Corpus, model: str) -> tuple[list[str], np.ndarray]:
    """The current vector of every paper (the newest part wins for a paper whose text changed;
    vectors of texts no longer in the corpus are left out): ids and a float32 matrix."""
    ids, _, matrix = load_vector_table(corpus, model)
    return ids, matrix


def current_hashes(corpus: Corpus, model: str) -> dict[str, str]:
    """The text hash of each paper's current text for ``model`` (papers without text left out):
    a vector is current when its hash is this one."""
    current = {}
    summaries = summaries_for_model(corpus, model_name(model))
    for batch in _papers(corpus):
        for paper_id, title, abstract in zip(batch["paper_id"].to_pylist(),
                                             batch["title"].to_pylist(),
                                             batch["abstract"].to_pylist(), strict=True):
            text = embed_text(title, abstract, summaries.get(paper_id))
            if text:
                current[paper_id] = text_hash(text)
    return current


def load_vector_table(corpus: Corpus, model: str) -> tuple[list[str], list[str], np.ndarray]:
    """:func:`load_vectors` with the text hash of each vector: ids, hashes, float32 matrix."""
    directory = vectors_dir(corpus, model)
    if not any(directory.glob("part-*.parquet")):
        raise FileNotFoundError(f"{corpus.root}: no vectors for model {model!r}; run "
                                f"'openmsd embed {corpus.root} --model {model}' first")
    current = current_hashes(corpus, model)
    ids: list[str] = []
    hashes: list[str] = []
    rows: list[np.ndarray] = []
    seen: set[str] = set()
    for part in sorted(directory.glob("part-*.parquet"), reverse=True):
        table = pq.read_table(part)
        matrix = np.asarray(table["vector"].combine_chunks().flatten()).reshape(
            table.num_rows, -1)
        for i, (paper_id, digest) in enumerate(zip(table["paper_id"].to_pylist(),
                                                   table["text_hash"].to_pylist(), strict=True)):
            if paper_id not in seen and current.get(paper_id) == digest:
                seen.add(paper_id)
                ids.append(paper_id)
                hashes.append(digest)
                rows.append(matrix[i])
    if not rows:
        return [], [], np.zeros((0, 0), np.float32)
    order = np.argsort(ids)
    return ([ids[i] for i in order], [hashes[i] for i in order],
            np.vstack(rows)[order].astype(np.float32))
