"""Vectors of the texts one model has embedded, so a text is embedded once per model: within a
run (the suite's texts repeat: an unchanged title, two neighbours that agree) and across runs
(``DIR/cache/<model>/part-NNNNN.parquet``, ``key`` = kind + text hash, each part written
atomically, so an interrupted run resumes).

>>> import numpy as np
>>> class Count:
...     name, dim, calls = "count", 2, 0
...     def encode(self, texts, kind="passage", batch_size=32):
...         Count.calls += len(texts)
...         return np.ones((len(texts), 2), np.float32)
>>> cache = EmbeddingCache(None)
>>> cache.encode(Count(), ["a", "b", "a"], "passage").shape, Count.calls
((3, 2), 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from rich.progress import Progress

from openmsd.io import ParquetSink
from openmsd.models import DenseEncoder, Kind
from openmsd.vectors import text_hash

CHUNK = 1024  # texts per part file


class EmbeddingCache:
    """Text vectors of one model, in memory and (with a directory) on disk."""

    def __init__(self, directory: Path | None):
        self.directory = directory
        self.vectors: dict[str, np.ndarray] = {}
        self.embedded = 0  # texts this process sent to the encoder
        if directory is not None:
            for part in sorted(directory.glob("part-*.parquet")):
                table = pq.read_table(part)
                matrix = np.asarray(table["vector"].combine_chunks().flatten(),
                                    np.float32).reshape(table.num_rows, -1)
                self.vectors.update(zip(table["key"].to_pylist(), matrix, strict=True))

    @staticmethod
    def key(text: str, kind: Kind) -> str:
        return f"{kind}:{text_hash(text)}"

    def _save(self, keys: list[str], matrix: np.ndarray) -> None:
        if self.directory is None:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        number = len(list(self.directory.glob("part-*.parquet")))
        schema = pa.schema([("key", pa.string()), ("vector", pa.list_(pa.float32(),
                                                                      matrix.shape[1]))])
        table = pa.table({"key": keys, "vector": pa.FixedSizeListArray.from_arrays(
            matrix.reshape(-1), matrix.shape[1])}, schema=schema)
        with ParquetSink(self.directory / f"part-{number:05d}.parquet", schema) as sink:
            sink.write(table)

    def encode(self, encoder: DenseEncoder, texts: Sequence[str], kind: Kind,
               batch_size: int = 32, description: str | None = None) -> np.ndarray:
        """The vectors of ``texts`` (rows in order), embedding only the texts not cached;
        a progress bar with ``description``."""
        keys = [self.key(t, kind) for t in texts]
        todo = list(dict.fromkeys(k for k in keys if k not in self.vectors))
        if todo:
            text_of = dict(zip(keys, texts, strict=True))
            chunks = range(0, len(todo), CHUNK)
            if description:
                with Progress(*Progress.get_default_columns(), "{task.completed}/{task.total}",
                              transient=False) as bar:
                    task = bar.add_task(description, total=len(todo))
                    for start in chunks:
                        self._encode_chunk(encoder, todo[start:start + CHUNK], text_of, kind,
                                           batch_size)
                        bar.advance(task, len(todo[start:start + CHUNK]))
            else:
                for start in chunks:
                    self._encode_chunk(encoder, todo[start:start + CHUNK], text_of, kind,
                                       batch_size)
        if not keys:
            return np.zeros((0, encoder.dim), np.float32)
        return np.vstack([self.vectors[k] for k in keys])

    def _encode_chunk(self, encoder: DenseEncoder, keys: list[str], text_of: dict[str, str],
                      kind: Kind, batch_size: int) -> None:
        matrix = np.asarray(encoder.encode([text_of[k] for k in keys], kind, batch_size),
                            np.float32)
        self.vectors.update(zip(keys, matrix, strict=True))
        self.embedded += len(keys)
        self._save(keys, matrix)
