"""Each objective on hand-made vectors against a hand computation."""

from __future__ import annotations

import math

import pytest
import torch

from openmsd.train.citrec.losses import (
    LOSSES,
    MPTSrcLoss,
    MPTSrcTgtLoss,
    MPTTgtLoss,
    TripletLoss,
)

# one manuscript s at the origin; target t, two extra positives, two negatives
S = torch.tensor([[0.0, 0.0]])
T = torch.tensor([[1.0, 0.0]])
P = torch.tensor([[[0.0, 2.0], [4.0, 0.0]]])
N = torch.tensor([[[0.0, 1.5], [3.0, 4.0]]])  # ||s - n|| = 1.5 and 5


def h(d_pos: float) -> float:
    """mean over the two negatives of [d_pos - d_neg + 1]+."""
    return (max(0.0, d_pos - 1.5 + 1) + max(0.0, d_pos - 5 + 1)) / 2


def test_triplet_by_hand() -> None:
    # ([1 - 1.5 + 1]+ + [1 - 5 + 1]+) / 2 = 0.25
    assert TripletLoss()(S, T, P, N).item() == pytest.approx(h(1.0))


def test_mpt_src_by_hand() -> None:
    expected = h(1.0) + h(2.0) + h(4.0)  # ||s-t||, ||s-p1||, ||s-p2||
    assert MPTSrcLoss()(S, T, P, N).item() == pytest.approx(expected)
    assert expected == pytest.approx(0.25 + 0.75 + 1.75)


def test_mpt_tgt_by_hand() -> None:
    expected = h(1.0) + h(math.sqrt(5)) + h(3.0)  # ||t-p1|| = √5, ||t-p2|| = 3
    assert MPTTgtLoss()(S, T, P, N).item() == pytest.approx(expected)


def test_mpt_src_tgt_by_hand() -> None:
    expected = h(1.0) + h(2.0) + h(4.0) + h(math.sqrt(5)) + h(3.0)
    assert MPTSrcTgtLoss()(S, T, P, N).item() == pytest.approx(expected)


def test_mask_drops_missing_positives_and_batch_is_averaged() -> None:
    s, t = torch.cat([S, S]), torch.cat([T, T])
    p, n = torch.cat([P, P]), torch.cat([N, N])
    mask = torch.tensor([[True, True], [True, False]])
    row1 = h(1.0) + h(2.0) + h(4.0)
    row2 = h(1.0) + h(2.0)
    assert MPTSrcLoss()(s, t, p, n, mask).item() == pytest.approx((row1 + row2) / 2)
    # no extra positives at all: every multi-positive loss is the triplet loss
    for loss in LOSSES.values():
        assert loss()(S, T, P[:, :0], N).item() == pytest.approx(h(1.0))


def test_margin_and_gradients() -> None:
    t = T.clone().requires_grad_(True)
    loss = TripletLoss(margin=0.75)(S, t, P, N)
    assert loss.item() == pytest.approx((1 - 1.5 + 0.75) / 2)
    loss.backward()
    assert t.grad is not None and t.grad[0, 0] > 0  # moving t towards s lowers the loss
    with pytest.raises(ValueError, match="margin"):
        TripletLoss(margin=-1)
    with pytest.raises(ValueError, match="negatives"):
        TripletLoss()(S, T, P, N[:, :0])
