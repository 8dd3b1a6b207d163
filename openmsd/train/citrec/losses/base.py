"""What the four citation-recommendation losses share: hinge terms on Euclidean distances.

Every loss of :mod:`openmsd.train.citrec.losses` is a sum of hinge terms

    [ ||a − p|| − ||s − n_j|| + ε ]₊

over a set of *positive pairs* (a, p) and the ``m`` negatives n_j of the manuscript context s,
averaged over the negatives and the batch. The losses differ only in their positive pairs
(MP-BERT4CR §4.1.5): the manuscript s with the target t (all of them), s with the extra
positives p_i (``mpt-src``), t with the p_i (``mpt-tgt``), or both (``mpt-src-tgt``). The
paper's equations did not survive in our copy of it; this form follows its text: "minimise the
distance between d_s and d_t [and the listed pairs] ... meanwhile the manuscript embedding
should be distanced to the m negative embeddings", Euclidean distance, margin ε = 1, built on
the N-tuplet loss (each positive pair against every negative).

``distance="cosine"`` (what ``train citrec`` uses) takes the distances between L2-normalised
vectors, ``sqrt(2 − 2 cos)``: the geometry the index ranks by. With ``"euclidean"`` (the paper's,
on raw vectors) the loss is blind to what cosine ranking sees: adding one vector to every
document changes no distance but moves every cosine towards 1, and that is how our first runs
collapsed (mean cosine 0.95 between unrelated documents after 120 steps, Recall@10 0 %).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

DISTANCES = ("cosine", "euclidean")


def hinge(positive_distance: Tensor, negative_distances: Tensor, margin: float) -> Tensor:
    """(B,) mean over the ``m`` negatives of ``[d⁺ − d⁻_j + margin]₊``: ``positive_distance``
    (B,), ``negative_distances`` (B, m)."""
    return torch.relu(positive_distance[:, None] - negative_distances + margin).mean(dim=1)


def extra_positive_terms(anchor: Tensor, positives: Tensor, positive_mask: Tensor,
                         negative_distances: Tensor, margin: float) -> Tensor:
    """(B,) the sum over each row's valid extra positives p_i of ``hinge(||anchor − p_i||)``:
    ``anchor`` (B, d), ``positives`` (B, P, d), ``positive_mask`` (B, P) true where p_i exists."""
    if positives.shape[1] == 0:
        return anchor.new_zeros(anchor.shape[0])
    distances = torch.linalg.vector_norm(anchor[:, None, :] - positives, dim=-1)  # (B, P)
    terms = torch.relu(distances[:, :, None] - negative_distances[:, None, :] + margin).mean(-1)
    return (terms * positive_mask.to(terms.dtype)).sum(dim=1)


class MultiPositiveTriplet(nn.Module):
    """The common body: ``pairs`` names the positive pairs besides (s, t): ``"src"`` adds
    (s, p_i), ``"tgt"`` adds (t, p_i)."""

    pairs: tuple[str, ...] = ()

    def __init__(self, margin: float = 1.0, distance: str = "euclidean"):
        super().__init__()
        if margin < 0:
            raise ValueError(f"margin: must be at least 0, got {margin}")
        if distance not in DISTANCES:
            raise ValueError(f"distance: expected one of {', '.join(DISTANCES)}, got "
                             f"{distance!r}")
        self.margin = margin
        self.distance = distance

    def forward(self, source: Tensor, target: Tensor, positives: Tensor, negatives: Tensor,
                positive_mask: Tensor | None = None) -> Tensor:
        """The mean loss of a batch: ``source`` (B, d) manuscript contexts, ``target`` (B, d)
        the cited papers, ``positives`` (B, P, d) extra positives (P may be 0), ``negatives``
        (B, m, d) with m ≥ 1, ``positive_mask`` (B, P) which positives exist (default all)."""
        if negatives.ndim != 3 or negatives.shape[1] == 0:
            raise ValueError("negatives: expected a (batch, m ≥ 1, dim) tensor")
        if positive_mask is None:
            positive_mask = torch.ones(positives.shape[:2], dtype=torch.bool,
                                       device=positives.device)
        if self.distance == "cosine":
            source, target, positives, negatives = (
                nn.functional.normalize(x, dim=-1)
                for x in (source, target, positives, negatives))
        negative_distances = torch.linalg.vector_norm(source[:, None, :] - negatives, dim=-1)
        loss = hinge(torch.linalg.vector_norm(source - target, dim=-1), negative_distances,
                     self.margin)
        if "src" in self.pairs:
            loss = loss + extra_positive_terms(source, positives, positive_mask,
                                               negative_distances, self.margin)
        if "tgt" in self.pairs:
            loss = loss + extra_positive_terms(target, positives, positive_mask,
                                               negative_distances, self.margin)
        return loss.mean()

    def get_config_dict(self) -> dict[str, float | str]:
        return {"margin": self.margin, "distance": self.distance}
