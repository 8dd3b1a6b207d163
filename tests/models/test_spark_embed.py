"""``embed --engine spark``: the single-process vectors, per paper, within the backend's cosine;
resumable per partition."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.dataset as ds
import pytest

from openmsd.corpus import Corpus
from openmsd.ingest import ingest
from openmsd.models import embed_corpus, embed_on_spark, load_model, load_vectors
from openmsd.vectors import vector_key

pytest.importorskip("onnxruntime")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, shared_data_module) -> Corpus:
    root = tmp_path_factory.mktemp("embed")
    lines = (shared_data_module / "taln" / "papers.jsonl").read_bytes().splitlines()[:160]
    (root / "papers.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    ingest([root / "papers.jsonl"], root / "corpus")
    return Corpus(root / "corpus")


def vectors(directory: str) -> tuple[list[str], np.ndarray]:
    table = ds.dataset(directory, format="parquet").to_table().sort_by("paper_id")
    return table["paper_id"].to_pylist(), np.asarray(
        table["vector"].combine_chunks().flatten()).reshape(table.num_rows, -1)


def test_spark_vectors_match_the_single_process_and_resume(corpus, tiny_model, tmp_path,
                                                           spark):
    model = str(tiny_model)
    key = vector_key(model, "onnx")
    single = embed_corpus(corpus, load_model(model, "onnx"), key)
    ids, matrix = load_vectors(corpus, key)
    first = embed_on_spark(str(corpus.table_path("papers")), str(tmp_path / "vectors"), model,
                           "onnx", spark=spark, rows_per_partition=50)
    assert (first.embedded, first.no_text) == (single.embedded, single.no_text)
    assert first.parts == 4  # 160 papers, about 50 a partition
    spark_ids, spark_matrix = vectors(first.directory)
    assert spark_ids == ids
    # int8 activations are quantised per batch: equal within the backend's cosine
    assert float((matrix * spark_matrix).sum(axis=1).min()) > 0.99

    again = embed_on_spark(str(corpus.table_path("papers")), str(tmp_path / "vectors"), model,
                           "onnx", spark=spark, rows_per_partition=50)
    assert (again.embedded, again.cached, again.parts) == (0, first.embedded, 0)

    lost = sorted(Path(first.directory).glob("part-*.parquet"))[1]  # a partition never written
    n_lost = ds.dataset(str(lost)).count_rows()
    lost.unlink()
    resumed = embed_on_spark(str(corpus.table_path("papers")), str(tmp_path / "vectors"), model,
                             "onnx", spark=spark, rows_per_partition=50)
    assert (resumed.embedded, resumed.parts) == (n_lost, 1)
    assert vectors(first.directory)[0] == ids
    assert not list(Path(first.directory).glob(".*"))  # no half-written part left
