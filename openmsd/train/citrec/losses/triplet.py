"""The conventional triplet loss of MP-BERT4CR (its ``MB4R_triplet`` row; Specter's objective).

    L = mean_j [ ||s − t|| − ||s − n_j|| + ε ]₊

Inputs:

+--------------------------+---------------------------------------------+
| source (B, d)            | manuscript-context vectors s                |
| target (B, d)            | cited-paper vectors t                       |
| positives (B, P, d)      | ignored here (P may be 0)                   |
| negatives (B, m, d)      | negative-paper vectors n_j                  |
+--------------------------+---------------------------------------------+

Example::

    >>> import torch
    >>> from openmsd.train.citrec.losses import TripletLoss
    >>> s, t = torch.tensor([[0.0, 0.0]]), torch.tensor([[3.0, 0.0]])
    >>> n = torch.tensor([[[0.0, 2.5]]])
    >>> TripletLoss(margin=1.0)(s, t, torch.zeros(1, 0, 2), n).item()  # 3 − 2.5 + 1
    1.5
"""

from __future__ import annotations

from openmsd.train.citrec.losses.base import MultiPositiveTriplet


class TripletLoss(MultiPositiveTriplet):
    """One positive pair, (manuscript s, target t), against each negative."""

    pairs = ()
