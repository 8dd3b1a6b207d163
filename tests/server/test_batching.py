"""Concurrent queries are encoded together, each caller getting its own vector back."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from openmsd.models import load_model
from openmsd.server.resources import BatchingEncoder
from tests.server.conftest import MODEL


def test_concurrent_queries_share_forward_passes() -> None:
    encoder = load_model(MODEL)
    texts = [f"query number {i} about dependency parsing" for i in range(20)]
    alone = {t: encoder.encode([t], "query")[0] for t in texts}
    batching = BatchingEncoder(encoder, wait_s=0.05)
    got: dict[str, np.ndarray] = {}
    start = threading.Barrier(len(texts))

    def ask(text: str) -> None:
        start.wait()
        got[text] = batching.encode([text], "query")[0]

    threads = [threading.Thread(target=ask, args=(t,)) for t in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for text in texts:
        np.testing.assert_allclose(got[text], alone[text], atol=1e-4)
    assert batching.batches < len(texts) / 2
    with pytest.raises(Exception):  # noqa: B017 - the encoder's own error reaches the caller
        batching.encode([None], "query")  # type: ignore[list-item]
