"""The heads an adapter trains over stored vectors (PyTorch, CPU): an identity-initialised
linear map, or a low-rank residual ``x + up(down(x))`` whose ``up`` starts at zero. Both start
as the identity, so an untrained head changes nothing, and both say how far they moved from it
(:meth:`pull`), the penalty that keeps a small corpus from overfitting.

>>> import torch
>>> head = LinearHead(4)
>>> x = torch.nn.functional.normalize(torch.randn(3, 4), dim=-1)
>>> bool(torch.allclose(head(x), x)), float(head.pull())
(True, 0.0)
"""

from __future__ import annotations

import torch
from torch import nn

from openmsd.models import Head

__all__ = ["HEADS", "AdapterHead", "LinearHead", "LowRankHead", "make_head"]

HEADS = ("linear", "low-rank")


class AdapterHead(nn.Module):
    """A head: unit rows in, unit rows out; :meth:`pull` is its squared distance from the
    identity map; :meth:`export` its tensors for :mod:`openmsd.models.adapter`."""

    kind = "identity"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.normalize(x + self.delta(x), dim=-1)

    def delta(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def pull(self) -> torch.Tensor:
        raise NotImplementedError

    def export(self) -> Head:
        raise NotImplementedError


class LinearHead(AdapterHead):
    """``W x`` with ``W`` a full ``dim × dim`` matrix, initialised to the identity; the pull is
    ``‖W − I‖²``."""

    kind = "linear"

    def __init__(self, dim: int):
        super().__init__()
        self.residual = nn.Parameter(torch.zeros(dim, dim))  # W − I

    def delta(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.residual.T

    def pull(self) -> torch.Tensor:
        return (self.residual ** 2).sum()

    def export(self) -> Head:
        weight = torch.eye(self.residual.shape[0]) + self.residual.detach()
        return Head("linear", {"weight": weight.numpy().copy()})


class LowRankHead(AdapterHead):
    """``x + U V x`` with ``V`` (``rank × dim``) random and ``U`` (``dim × rank``) zero at the
    start; the pull is ``‖U V‖²``."""

    kind = "low-rank"

    def __init__(self, dim: int, rank: int = 32, seed: int = 0):
        super().__init__()
        generator = torch.Generator().manual_seed(seed)
        self.down = nn.Parameter(torch.randn(rank, dim, generator=generator) / dim ** 0.5)
        self.up = nn.Parameter(torch.zeros(dim, rank))

    def delta(self, x: torch.Tensor) -> torch.Tensor:
        return (x @ self.down.T) @ self.up.T

    def pull(self) -> torch.Tensor:
        # ‖U V‖² = trace(Vᵀ Uᵀ U V) = ‖(UᵀU)^½ V‖²: computed on rank × rank matrices
        return torch.trace((self.up.T @ self.up) @ (self.down @ self.down.T))

    def export(self) -> Head:
        return Head("low-rank", {"down": self.down.detach().numpy().copy(),
                                 "up": self.up.detach().numpy().copy()})


def make_head(kind: str, dim: int, rank: int = 32, seed: int = 0) -> AdapterHead:
    """A fresh head of ``kind`` (:data:`HEADS`) over ``dim`` dimensions."""
    if kind == "linear":
        return LinearHead(dim)
    if kind == "low-rank":
        return LowRankHead(dim, rank, seed)
    raise ValueError(f"unknown head {kind!r}: expected one of {', '.join(HEADS)}")
