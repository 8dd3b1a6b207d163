"""``mpt-src-tgt``, the multi-positive source-target-based triplet, MP-BERT4CR's default
(§4.1.5): the manuscript s near its target t and the other positives p_i, and t near the p_i.

    L = mean_j [ ||s − t|| − ||s − n_j|| + ε ]₊
        + Σ_i mean_j [ ||s − p_i|| − ||s − n_j|| + ε ]₊
        + Σ_i mean_j [ ||t − p_i|| − ||s − n_j|| + ε ]₊

Inputs: ``source`` (B, d), ``target`` (B, d), ``positives`` (B, P, d), ``negatives``
(B, m, d), optional ``positive_mask`` (B, P).

Example::

    >>> import torch
    >>> from openmsd.train.citrec.losses import MPTSrcTgtLoss
    >>> s, t = torch.tensor([[0.0, 0.0]]), torch.tensor([[1.0, 0.0]])
    >>> p, n = torch.tensor([[[0.0, 3.0]]]), torch.tensor([[[0.0, 2.0]]])
    >>> round(MPTSrcTgtLoss()(s, t, p, n).item(), 4)  # 0 + [3 − 2 + 1]₊ + [√10 − 2 + 1]₊
    4.1623
"""

from __future__ import annotations

from openmsd.train.citrec.losses.base import MultiPositiveTriplet


class MPTSrcTgtLoss(MultiPositiveTriplet):
    """Positive pairs (s, t), (s, p_i) and (t, p_i)."""

    pairs = ("src", "tgt")
