"""OpenMSD's eq. 1 on stored vectors: in-batch InfoNCE, optionally with hard negatives.

For a batch of anchors ``a_i`` and positives ``p_i`` (rows already through the head, unit
length), the loss is the cross-entropy of each anchor picking its own positive among every
positive of the batch (and every hard negative given), the similarities divided by the
temperature; ``symmetric`` adds the same with positives picking their anchors.

>>> import torch
>>> a = torch.eye(3)
>>> round(float(info_nce(a, a, temperature=0.05)), 4)  # each row's own partner, far ahead
0.0
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["info_nce"]


def info_nce(anchors: torch.Tensor, positives: torch.Tensor,
             negatives: torch.Tensor | None = None, temperature: float = 0.05,
             symmetric: bool = True) -> torch.Tensor:
    """The mean InfoNCE loss of a batch: ``anchors`` and ``positives`` (``n × d``) pair row by
    row; ``negatives`` (``m × d``, any ``m``) are extra candidates for every anchor."""
    candidates = positives if negatives is None or len(negatives) == 0 else torch.cat(
        [positives, negatives])
    logits = anchors @ candidates.T / temperature
    target = torch.arange(len(anchors))
    loss = nn.functional.cross_entropy(logits, target)
    if symmetric:
        loss = (loss + nn.functional.cross_entropy(positives @ anchors.T / temperature,
                                                   target)) / 2
    return loss
