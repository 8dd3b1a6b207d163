"""``contrastive``: a multi-positive InfoNCE over every citation-side vector of a batch, at a
cosine temperature (in-batch negatives plus the sampled and prefetch-hard negatives).

Each manuscript context s_b is scored against all N citation-side documents of the batch
(every row's target, extra positives and negatives), by cosine / τ. Its positives are its own
target and co-cited positives; every other document is a negative (another row's target is a
free in-batch negative), except those ``ignore`` marks (papers the location also cites). Each
positive p is pulled up against the negatives only, not against the other positives (the
multi-positive point of MP-BERT4CR: co-cited papers are not each other's competitors):

    L_b = mean_{p ∈ P_b} −log( e^{cos(s,p)/τ} / (e^{cos(s,p)/τ} + Σ_{n ∈ N_b} e^{cos(s,n)/τ}) )

Inputs: ``source`` (B, d), ``documents`` (N, d), ``positive`` (B, N) bool, optional
``ignore`` (B, N) bool. Unlike the hinge losses, this one does not saturate once a margin is
met, and a batch of 32 brings some 250 negatives for the cost of its own documents.

Example::

    >>> import torch
    >>> s = torch.tensor([[1.0, 0.0]])
    >>> docs = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> loss = ContrastiveLoss(temperature=1.0)
    >>> round(loss(s, docs, torch.tensor([[True, False]])).item(), 4)  # −log(e / (e + 1))
    0.3133
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class ContrastiveLoss(nn.Module):
    """Multi-positive InfoNCE on cosine similarities divided by ``temperature``."""

    def __init__(self, temperature: float = 0.05):
        super().__init__()
        if temperature <= 0:
            raise ValueError(f"temperature: must be above 0, got {temperature}")
        self.temperature = temperature

    def forward(self, source: Tensor, documents: Tensor, positive: Tensor,
                ignore: Tensor | None = None) -> Tensor:
        """The mean loss over the rows of ``source``; every row needs a positive."""
        if positive.shape != (source.shape[0], documents.shape[0]):
            raise ValueError(f"positive: expected shape {(source.shape[0], documents.shape[0])}"
                             f", got {tuple(positive.shape)}")
        if not bool(positive.any(dim=1).all()):
            raise ValueError("positive: every row needs at least one positive document")
        logits = (nn.functional.normalize(source, dim=-1)
                  @ nn.functional.normalize(documents, dim=-1).T) / self.temperature
        drop = positive if ignore is None else positive | ignore
        negatives = torch.logsumexp(logits.masked_fill(drop, float("-inf")), dim=1)  # (B,)
        terms = torch.logaddexp(logits, negatives[:, None]) - logits  # −log p(positive)
        weights = positive.to(terms.dtype)
        return ((terms * weights).sum(dim=1) / weights.sum(dim=1)).mean()

    def get_config_dict(self) -> dict[str, float]:
        return {"temperature": self.temperature}
