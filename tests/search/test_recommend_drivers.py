"""Driver sentences that cannot be computed are reported, not silently left empty."""

from __future__ import annotations

import logging

import faiss
import numpy as np
import pyarrow as pa

from openmsd.index import META, VectorIndex
from openmsd.models import load_model
from openmsd.rank import paper_vectors


def test_an_index_without_its_vectors_is_reported(caplog) -> None:
    encoder = load_model("muse-v3")
    vectors = encoder.encode(["Dependency parsing of French", "Coral reefs"], "passage")
    matrix = np.ascontiguousarray(vectors, np.float32)
    ivf = faiss.index_factory(matrix.shape[1], "IVF1,Flat", faiss.METRIC_INNER_PRODUCT)
    ivf.train(matrix)
    ivf.add(matrix)  # no direct map: it cannot give a row's vector back
    papers = pa.table({"paper_id": ["a", "b"], "text_hash": ["x", "y"], "language": ["en", "en"],
                       "year": [2000, 2001]}, schema=META)
    with caplog.at_level(logging.WARNING, "openmsd.recommend"):
        vectors = paper_vectors(VectorIndex(ivf, papers), ["a"])
    assert vectors == {}
    assert "driver sentences left out" in caplog.text and "RuntimeError" in caplog.text
