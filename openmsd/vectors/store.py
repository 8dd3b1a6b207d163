"""The vectors format: how a model's paper vectors are stored beside a corpus.

``CORPUS/vectors/<key>/part-NNNNN.parquet`` (``paper_id``, ``text_hash``, ``vector``: a
fixed-size list of float32), one part per chunk of papers, each written atomically; ``<key>``
is the model's :func:`~openmsd.vectors.vector_key` (model and backend) made a directory name by
:func:`~openmsd.vectors.model_slug`. A vector is current while its ``text_hash`` is that of the
paper's text now (:func:`text_hash`); :func:`read_current` reads the current vector of each
paper, the newest part winning. What is embedded, and which texts are current, is
:mod:`openmsd.models.embed`'s.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from openmsd.corpus import PARTS, Corpus
from openmsd.io import ParquetSink, numbers, parquet_list
from openmsd.vectors.keys import BACKENDS, model_slug, split_vector_key, vector_key

__all__ = ["known", "missing_vectors", "read_current", "stored_backends", "text_hash",
           "vector_schema", "vectors_dir", "write_part"]


def stored_backends(corpus: Corpus, model: str, what: str = "vectors") -> list[str]:
    """The backends whose vectors (``what="vectors"``) or index (``"index"``) of ``model``
    ``corpus`` holds, the most recently written first."""
    if what == "vectors":
        folder, pattern = corpus.layout.vector_dir, PARTS
    else:
        folder, pattern = corpus.layout.index_dir, "index.faiss"
    found = []
    for backend in BACKENDS:
        files = list(folder(model_slug(vector_key(model, backend))).glob(pattern))
        if files:
            found.append((max(f.stat().st_mtime_ns for f in files), backend))
    return [backend for _, backend in sorted(found, reverse=True)]


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def vectors_dir(corpus: Corpus, model: str) -> Path:
    return corpus.layout.vector_dir(model_slug(model))


def vector_schema(dim: int) -> pa.Schema:
    return pa.schema([("paper_id", pa.string()), ("text_hash", pa.string()),
                      ("vector", pa.list_(pa.float32(), dim))],
                     metadata={"openmsd.table": "vectors"})


def write_part(path: Path, ids: list[str], hashes: list[str], matrix: np.ndarray) -> None:
    """Write one part (rows of ``matrix`` as float32), atomically."""
    matrix = np.asarray(matrix, np.float32)
    schema = vector_schema(matrix.shape[1])
    table = pa.table({"paper_id": ids, "text_hash": hashes,
                      "vector": pa.FixedSizeListArray.from_arrays(matrix.reshape(-1),
                                                                  matrix.shape[1])},
                     schema=schema)
    with ParquetSink(path, schema) as sink:
        sink.write(table)


def known(directory: Path) -> set[tuple[str, str]]:
    """The ``(paper_id, text_hash)`` pairs the parts of ``directory`` hold."""
    parts = sorted(directory.glob(PARTS))
    if not parts:
        return set()
    rows = duckdb.sql(f"SELECT paper_id, text_hash FROM read_parquet({parquet_list(parts)})"
                      ).fetchall()
    return set(rows)


def read_current(directory: Path, current: Mapping[str, str]
                 ) -> tuple[list[str], list[str], np.ndarray]:
    """The vector of each paper whose ``current`` text hash a part of ``directory`` holds
    (the newest part first): ids (sorted), hashes, float32 matrix. The ids and hashes are read
    first; the vectors then go straight to their row of the matrix, a batch at a time (one
    copy of the vectors in memory, not one per step)."""
    ids: list[str] = []
    hashes: list[str] = []
    taken: list[np.ndarray] = []  # per part, the rows whose vector is kept
    seen: set[str] = set()
    parts = sorted(directory.glob(PARTS), reverse=True)
    for part in parts:
        table = pq.ParquetFile(part).read(columns=["paper_id", "text_hash"])
        rows = []
        for i, (paper_id, digest) in enumerate(zip(table["paper_id"].to_pylist(),
                                                   table["text_hash"].to_pylist(), strict=True)):
            if paper_id not in seen and current.get(paper_id) == digest:
                seen.add(paper_id)
                ids.append(paper_id)
                hashes.append(digest)
                rows.append(i)
        taken.append(np.array(rows, np.int64))
    if not ids:
        return [], [], np.zeros((0, 0), np.float32)
    order = np.argsort(ids)
    place = np.empty(len(ids), np.int64)  # each kept vector's row in the id order
    place[order] = np.arange(len(ids))
    matrix: np.ndarray | None = None
    done = 0
    for part, rows in zip(parts, taken, strict=True):
        start = 0
        for batch in pq.ParquetFile(part).iter_batches(columns=["vector"]):
            vectors = numbers(batch.column(0).flatten()).reshape(batch.num_rows, -1)
            if matrix is None:
                matrix = np.empty((len(ids), vectors.shape[1]), np.float32)
            low, high = np.searchsorted(rows, [start, start + batch.num_rows])
            matrix[place[done + low:done + high]] = vectors[rows[low:high] - start]
            start += batch.num_rows
        done += len(rows)
    assert matrix is not None
    return [ids[i] for i in order], [hashes[i] for i in order], matrix


def missing_vectors(corpus: Corpus, key: str) -> str:
    """What to say of a vector ``key`` ``corpus`` holds no vectors of: the ``embed`` that
    stores them under that very key (its backend named: ``embed`` without ``--backend`` may
    choose another), and the backends it has vectors of instead."""
    model, backend = split_vector_key(key)
    backend = backend or "torch"
    message = (f"{corpus.root}: no vectors for model {key!r}; run 'openmsd embed {corpus.root} "
               f"--model {model} --backend {backend}' first")
    other = [b for b in stored_backends(corpus, model) if b != backend]
    if other:
        message += (f" (or rank with the vectors it has: {model}:{other[0]}, from the "
                    f"{', '.join(other)} backend)")
    return message
