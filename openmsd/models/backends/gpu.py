"""A SentenceTransformer on a GPU: torch fp16, length-bucketed batches, batch size from memory.

:class:`BucketedTorchEncoder` wraps a :class:`~openmsd.models.encoder.SentenceTransformerEncoder`
and runs it on ``device`` (CUDA when there is one) in half precision. Texts are tokenised once,
sorted by token length and cut into batches of similar length (:func:`plan_batches`), each
holding at most :meth:`BucketedTorchEncoder.token_budget` padded tokens: the budget is found
from the device's free memory (``torch.cuda.mem_get_info``; the machine's available memory on
CPU) and an estimate of the activation bytes per token; a batch that still runs out of memory
is split in two and retried. On CPU the same path runs in float32 (the tests use it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from openmsd.models.encoder import Kind, SentenceTransformerEncoder, normalise

__all__ = ["BucketedTorchEncoder", "plan_batches"]

MEMORY_FRACTION = 0.5
"""The share of free memory one batch's activations may take."""
MAX_ROWS = 1024


def plan_batches(lengths: Sequence[int], token_budget: int, max_rows: int = MAX_ROWS
                 ) -> list[np.ndarray]:
    """Indices of ``lengths`` in batches of similar length, shortest first, each with
    ``rows × longest ≤ token_budget`` (a text longer than the budget gets a batch of its own).

    >>> [b.tolist() for b in plan_batches([5, 1, 4, 2], 8)]
    [[1, 3], [2], [0]]
    """
    order = np.argsort(np.asarray(lengths), kind="stable")
    batches: list[np.ndarray] = []
    start = 0
    while start < len(order):
        end = start + 1
        while (end < len(order) and end - start < max_rows
               and (end - start + 1) * lengths[order[end]] <= token_budget):
            end += 1
        batches.append(order[start:end])
        start = end
    return batches


class BucketedTorchEncoder:
    """A :class:`SentenceTransformerEncoder` on ``device`` (default: CUDA if present, else CPU)
    in ``dtype`` (default: float16 on CUDA, float32 on CPU); a :class:`DenseEncoder`."""

    def __init__(self, encoder: SentenceTransformerEncoder, device: str | None = None,
                 dtype: Any = None, token_budget: int | None = None):
        import torch  # optional: the models extra; torch takes ~2.8 s to import

        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.dtype = dtype or (torch.float16 if self.device.startswith("cuda")
                               else torch.float32)
        self.model = encoder.model.to(self.device, self.dtype).eval()
        self.name, self.dim, self.prefixes = encoder.name, encoder.dim, encoder.prefixes
        self.tokenizer = self.model.tokenizer
        self.max_length = int(self.model.max_seq_length)
        self._budget = token_budget
        config = self.model[0].auto_model.config
        self.hidden = int(config.hidden_size)
        self.heads = int(config.num_attention_heads)
        self.intermediate = int(getattr(config, "intermediate_size", 4 * self.hidden))

    def free_memory(self) -> int:
        """Free bytes on the device (CUDA), or the machine's available memory (CPU)."""
        import torch  # optional: the models extra; torch takes ~2.8 s to import

        if self.device.startswith("cuda"):
            return int(torch.cuda.mem_get_info(torch.device(self.device))[0])
        import psutil  # optional: the models extra

        return int(psutil.virtual_memory().available)

    def token_budget(self) -> int:
        """Padded tokens per batch: :data:`MEMORY_FRACTION` of free memory over the bytes one
        token's activations take in one layer (hidden states, feed-forward, attention row)."""
        if self._budget:
            return self._budget
        per_token = self.dtype.itemsize * (6 * self.hidden + 2 * self.intermediate
                            + 2 * self.heads * self.max_length)
        return max(self.max_length, int(self.free_memory() * MEMORY_FRACTION / per_token))

    def encode(self, texts: Sequence[str], kind: Kind = "passage",
               batch_size: int = 32) -> np.ndarray:
        """One L2-normalised float32 row per text (``batch_size`` is not used: the token
        budget decides)."""
        out = np.zeros((len(texts), self.dim), np.float32)
        if not len(texts):
            return out
        prefix = self.prefixes[kind]
        ids = self.tokenizer([prefix + t for t in texts], truncation=True,
                             max_length=self.max_length)["input_ids"]
        for batch in plan_batches([len(row) for row in ids], self.token_budget()):
            out[batch] = self._run([ids[i] for i in batch])
        return normalise(out)

    def _run(self, rows: list[list[int]]) -> np.ndarray:
        import torch  # optional: the models extra; torch takes ~2.8 s to import

        try:
            padded = self.tokenizer.pad({"input_ids": rows}, return_tensors="pt")
            features = {k: v.to(self.device) for k, v in padded.items()}
            with torch.inference_mode():
                vectors = self.model(features)["sentence_embedding"]
            return vectors.float().cpu().numpy()
        except torch.OutOfMemoryError:
            if len(rows) == 1:
                raise
            torch.cuda.empty_cache()
            half = len(rows) // 2
            self._budget = max(self.max_length, self.token_budget() // 2)
            return np.vstack([self._run(rows[:half]), self._run(rows[half:])])
