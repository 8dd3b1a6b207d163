"""The GPU encoder's code path (torch, length buckets, token budget), run on CPU."""

from __future__ import annotations

import numpy as np
import pytest

from openmsd.models.backends.gpu import BucketedTorchEncoder, plan_batches


def test_batches_hold_similar_lengths_within_the_budget():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 64, 500).tolist()
    batches = plan_batches(lengths, 256, max_rows=32)
    assert sorted(i for b in batches for i in b.tolist()) == list(range(500))
    for batch in batches:
        widths = [lengths[i] for i in batch]
        assert len(batch) <= 32
        assert len(batch) == 1 or len(batch) * max(widths) <= 256
    tops = [max(lengths[i] for i in b) for b in batches]
    assert tops == sorted(tops)  # shortest first: little padding


def test_bucketed_encoder_gives_the_sentence_transformer_vectors(tiny_model):
    pytest.importorskip("sentence_transformers")
    from openmsd.models.encoder import SentenceTransformerEncoder

    texts = ["un analyseur syntaxique", "a" * 300, "traduction automatique " * 20, "x"] * 5
    reference = SentenceTransformerEncoder(tiny_model).encode(texts, "passage")
    gpu_path = BucketedTorchEncoder(SentenceTransformerEncoder(tiny_model), device="cpu")
    assert gpu_path.token_budget() >= gpu_path.max_length  # from the machine's free memory
    assert float((gpu_path.encode(texts) * reference).sum(axis=1).min()) > 0.9999
    small = BucketedTorchEncoder(SentenceTransformerEncoder(tiny_model), device="cpu",
                                 token_budget=64)  # many small batches, same vectors
    assert float((small.encode(texts) * reference).sum(axis=1).min()) > 0.9999
