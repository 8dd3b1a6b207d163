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


def test_the_gpu_backend_loads_the_bucketed_encoder_and_keeps_its_own_vectors(tiny_model):
    pytest.importorskip("sentence_transformers")
    from openmsd.models import GPU_BACKEND, UnsupportedBackendError, load_model
    from openmsd.models.encoder import SentenceTransformerEncoder
    from openmsd.vectors import split_vector_key, vector_key

    encoder = load_model(str(tiny_model), GPU_BACKEND)
    assert isinstance(encoder, BucketedTorchEncoder)
    if encoder.device == "cpu":  # no GPU: the same path in float32
        assert str(encoder.dtype) == "torch.float32"
    texts = ["un analyseur syntaxique", "traduction automatique " * 30]
    reference = SentenceTransformerEncoder(tiny_model).encode(texts, "passage")
    assert float((encoder.encode(texts) * reference).sum(axis=1).min()) > 0.9999
    key = vector_key("e5-small-multilingual", GPU_BACKEND)
    assert key == "e5-small-multilingual@cuda-fp16"
    assert split_vector_key(key) == ("e5-small-multilingual", GPU_BACKEND)
    with pytest.raises(UnsupportedBackendError, match="'bm25' is not a transformer"):
        load_model("bm25", GPU_BACKEND)


def test_a_gpu_makes_the_gpu_backend_the_default_for_transformers(tiny_model, monkeypatch):
    from openmsd.models import GPU_BACKEND, default_backend, registry

    if not registry.gpu_available():
        assert default_backend("e5-small-multilingual") == "onnx-sq8"
    monkeypatch.setattr(registry, "gpu_available", lambda: True)
    assert default_backend("e5-small-multilingual") == GPU_BACKEND
    assert default_backend(str(tiny_model)) == GPU_BACKEND
    assert default_backend("bm25") == "torch" and default_backend("muse-v3") == "torch"
