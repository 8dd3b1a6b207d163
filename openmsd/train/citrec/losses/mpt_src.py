"""``mpt-src``, the multi-positive manuscript-based triplet (MP-BERT4CR §4.1.5): the manuscript
s near its target t and near every other positive p_i.

    L = mean_j [ ||s − t|| − ||s − n_j|| + ε ]₊ + Σ_i mean_j [ ||s − p_i|| − ||s − n_j|| + ε ]₊

Inputs: ``source`` (B, d), ``target`` (B, d), ``positives`` (B, P, d), ``negatives``
(B, m, d), optional ``positive_mask`` (B, P).

Example::

    >>> import torch
    >>> from openmsd.train.citrec.losses import MPTSrcLoss
    >>> s, t = torch.tensor([[0.0, 0.0]]), torch.tensor([[1.0, 0.0]])
    >>> p, n = torch.tensor([[[0.0, 3.0]]]), torch.tensor([[[0.0, 2.0]]])
    >>> MPTSrcLoss()(s, t, p, n).item()  # [1 − 2 + 1]₊ + [3 − 2 + 1]₊
    2.0
"""

from __future__ import annotations

from openmsd.train.citrec.losses.base import MultiPositiveTriplet


class MPTSrcLoss(MultiPositiveTriplet):
    """Positive pairs (s, t) and (s, p_i)."""

    pairs = ("src",)
