"""Concurrent queries are encoded together, each caller getting its own vector back."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from openmsd.models.registry import load_model
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


def test_coroutines_share_forward_passes_and_get_their_own_vectors() -> None:
    """encode_async (the search route's path) batches concurrent coroutines as encode batches
    threads, and hands each coroutine its own row or its batch's error."""
    import asyncio

    encoder = load_model(MODEL)
    texts = [f"une requête {i} sur l'analyse syntaxique" for i in range(20)]
    alone = {t: encoder.encode([t], "query")[0] for t in texts}
    batching = BatchingEncoder(encoder, wait_s=0.05)

    async def ask_all() -> list[np.ndarray]:
        return await asyncio.gather(*(batching.encode_async([t], "query") for t in texts))

    got = asyncio.run(ask_all())
    for text, vector in zip(texts, got, strict=True):
        np.testing.assert_allclose(vector[0], alone[text], atol=1e-4)
    assert batching.batches < len(texts) / 2
    assert batching.calls == len(texts) and batching.waited_s > 0  # queued, then batched
    with pytest.raises(Exception):  # noqa: B017 - the encoder's own error reaches the caller
        asyncio.run(batching.encode_async([None], "query"))  # type: ignore[list-item]


def test_muse_v3_runs_on_the_threads_the_server_asks_for(monkeypatch) -> None:
    """openmsd serve asks for one encoder thread ($OPENMSD_THREADS): muse-v3's BLAS follows."""
    from openmsd.models.encoder import USEEncoder
    from openmsd.server.resources import THREADS_ENV

    monkeypatch.setenv(THREADS_ENV, "1")
    assert USEEncoder().model.threads == 1
    monkeypatch.setenv(THREADS_ENV, "3")
    assert USEEncoder().model.threads == 3
