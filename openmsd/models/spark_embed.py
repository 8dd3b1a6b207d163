"""``openmsd embed --engine spark``: paper vectors computed in Spark's Python workers.

The papers are read with Spark, their embedding text and its hash computed in the executors
(:func:`openmsd.models.embed.embed_text`), papers whose ``(paper_id, text_hash)`` already has a
vector left out (an anti join), the rest hashed by ``paper_id`` into partitions of about
:data:`ROWS_PER_PARTITION` papers, and each partition embedded by ``mapInPandas``. The model is
loaded once per Python worker (:func:`worker_encoder`, kept while Spark reuses the worker):
the backend asked for, by default the model's as ``openmsd embed`` runs it on the driver's
machine (ONNX Runtime on a CPU); ``cuda-fp16`` on GPU executors runs torch fp16 with
length-bucketed batches (:class:`openmsd.models.backends.gpu.BucketedTorchEncoder`). Each task
uses ``spark.task.cpus`` threads.

Each partition is written by its task as one Parquet file in the vector store of the model and
backend (``VECTORS/<model>[@backend]/part-NNNNN.parquet``: ``paper_id``, ``text_hash``,
``vector``, the single-process layout, so :func:`openmsd.models.embed.load_vectors` and the
index read them), atomically: a file is there whole or not at all. A run that stops is resumed
by running it again: the finished partitions' papers are known and skipped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pyarrow import fs

from openmsd.corpus import local_spark
from openmsd.io import ParquetSink
from openmsd.models.embed import embed_text
from openmsd.models.registry import GPU_BACKEND, default_backend, load_model
from openmsd.vectors import model_slug, text_hash, vector_key, vector_schema

__all__ = ["ROWS_PER_PARTITION", "SparkEmbedResult", "embed_on_spark", "worker_encoder"]

ROWS_PER_PARTITION = 5_000
_ENCODERS: dict[tuple[str, str], Any] = {}


def worker_encoder(model: str, backend: str) -> Any:
    """The encoder of this Python worker, loaded on first use and kept."""
    key = (model, backend)
    if key not in _ENCODERS:
        encoder = load_model(model, backend)
        if backend in ("torch", GPU_BACKEND):
            import torch  # optional: the models extra; torch takes ~2.8 s to import

            torch.set_num_threads(int(os.environ.get("OPENMSD_THREADS", "1")))
        _ENCODERS[key] = encoder
    return _ENCODERS[key]


@dataclass
class SparkEmbedResult:
    """What a run did: papers embedded now, already there, without text; parts written."""

    model: str
    embedded: int
    cached: int
    no_text: int
    parts: int
    directory: str


def _texts(batches: Any) -> Any:
    for batch in batches:
        ids, texts, hashes = [], [], []
        for paper_id, title, abstract in zip(batch["paper_id"].to_pylist(),
                                             batch["title"].to_pylist(),
                                             batch["abstract"].to_pylist(), strict=True):
            text = embed_text(title, abstract)
            ids.append(paper_id)
            texts.append(text)
            hashes.append(text_hash(text) if text else None)
        yield pa.RecordBatch.from_pydict({"paper_id": ids, "text": texts, "text_hash": hashes})


def _embed_partitions(model: str, backend: str, directory: str, first: int,
                      batch_size: int) -> Any:
    def run(frames: Any) -> Any:
        # optional: the spark extra (pandas ~1.4 s, pyspark ~0.3 s)
        import pandas as pd
        from pyspark import TaskContext

        context = TaskContext.get()
        os.environ["OPENMSD_THREADS"] = str(context.cpus() if context else 1)
        part = first + (context.partitionId() if context else 0)
        ids: list[str] = []
        hashes: list[str] = []
        chunks: list[np.ndarray] = []
        for frame in frames:
            if not len(frame):
                continue
            encoder = worker_encoder(model, backend)
            chunks.append(encoder.encode(frame["text"].tolist(), "passage", batch_size))
            ids += frame["paper_id"].tolist()
            hashes += frame["text_hash"].tolist()
        if ids:
            matrix = np.vstack(chunks).astype(np.float32)
            schema = vector_schema(matrix.shape[1])
            table = pa.table({"paper_id": ids, "text_hash": hashes,
                              "vector": pa.FixedSizeListArray.from_arrays(
                                  matrix.reshape(-1), matrix.shape[1])}, schema=schema)
            _write_part(table, f"{directory}/part-{part:05d}.parquet")
        yield pd.DataFrame({"part": [part], "rows": [len(ids)]})
    return run


def _write_part(table: pa.Table, target: str) -> None:
    """One vector part, whole or not at all (a local rename; an object store's single PUT)."""
    if "://" in target and not target.startswith("file://"):
        filesystem, path = fs.FileSystem.from_uri(target)
        pq.write_table(table, path, filesystem=filesystem, compression="zstd")
        return
    path = Path(target.removeprefix("file://"))
    path.parent.mkdir(parents=True, exist_ok=True)
    with ParquetSink(path, table.schema) as sink:
        sink.write(table)


def _existing_parts(spark: Any, directory: str) -> list[str]:
    jvm = spark.sparkContext._jvm
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    path = jvm.org.apache.hadoop.fs.Path(directory)
    filesystem = path.getFileSystem(hadoop)
    if not filesystem.exists(path):
        return []
    return sorted(str(status.getPath()) for status in filesystem.listStatus(path)
                  if status.getPath().getName().startswith("part-")
                  and status.getPath().getName().endswith(".parquet"))


def embed_on_spark(papers: str, vectors: str, model: str, backend: str | None = None, *,
                   spark: Any = None, batch_size: int = 32,
                   rows_per_partition: int = ROWS_PER_PARTITION) -> SparkEmbedResult:
    """Embed the papers of ``papers`` (a Parquet file or directory of the papers table; a
    path or URI) whose text has no vector yet in ``vectors/<model>[@backend]/`` (``backend``
    None: the model's default, as ``openmsd embed`` runs it)."""
    from pyspark.sql import types as T  # optional: the spark extra; pyspark takes ~0.3 s to import

    backend = backend or default_backend(model)
    spark = spark or local_spark()
    key = vector_key(model, backend)
    directory = f"{str(vectors).rstrip('/')}/{model_slug(key)}"
    frame = spark.read.parquet(str(papers)).select("paper_id", "title", "abstract")
    texts = frame.mapInArrow(_texts, "paper_id string, text string, text_hash string")
    texts = texts.cache()
    total = texts.count()
    with_text = texts.where("text IS NOT NULL")
    existing = _existing_parts(spark, directory)
    todo = with_text
    if existing:
        known = spark.read.parquet(*existing).select("paper_id", "text_hash")
        todo = with_text.join(known, ["paper_id", "text_hash"], "left_anti")
    n_todo = todo.count()
    n_text = with_text.count()
    first = 1 + max((int(Path(p).stem.split("-")[1]) for p in existing), default=-1)
    parts = 0
    if n_todo:
        partitions = max(1, -(-n_todo // rows_per_partition))
        todo = todo.repartition(partitions, "paper_id").sortWithinPartitions("paper_id")
        schema = T.StructType([T.StructField("part", T.LongType()),
                               T.StructField("rows", T.LongType())])
        done = todo.mapInPandas(_embed_partitions(model, backend, directory, first,
                                                  batch_size), schema).collect()
        parts = sum(1 for row in done if row["rows"])
    texts.unpersist()
    return SparkEmbedResult(key, n_todo, n_text - n_todo, total - n_text, parts, directory)
