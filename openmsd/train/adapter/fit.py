"""Fitting a head on rows of stored vectors: epochs of shuffled batches, eq. 1
(:func:`~openmsd.train.adapter.objective.info_nce`) plus the pull toward the identity, Adam.

>>> import numpy as np, torch
>>> x = torch.nn.functional.normalize(torch.randn(40, 8), dim=-1)
>>> rows = np.array([[i, (i + 1) % 40, -1] for i in range(40)])
>>> head = fit(x, rows, FitSettings("linear", pull=0.1, epochs=2, batch_size=16))
>>> float(head.pull()) > 0
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch

from openmsd.train.adapter.head import AdapterHead, make_head
from openmsd.train.adapter.objective import info_nce

__all__ = ["FitSettings", "fit", "fitting"]


@dataclass(frozen=True)
class FitSettings:
    """How a head is fitted: its kind and pull, epochs, batch, temperature, learning rate,
    rank (low-rank heads) and seed."""

    head: str = "linear"
    pull: float = 0.1
    epochs: int = 1
    batch_size: int = 256
    temperature: float = 0.05
    learning_rate: float = 1e-3
    rank: int = 32
    seed: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def fitting(vectors: torch.Tensor, rows: np.ndarray, settings: FitSettings,
            max_steps: int | None = None) -> Iterator[AdapterHead]:
    """A head fitted on ``rows`` (``anchor, positive, negative`` positions in ``vectors``;
    negative -1: in-batch negatives only), yielded after each of ``settings.epochs`` epochs
    (in eval mode; the same head object, to judge before the next is asked for): a caller
    stops it where it stops improving. At most ``max_steps`` batches in all."""
    steps = 0
    torch.manual_seed(settings.seed)
    head = make_head(settings.head, vectors.shape[1], settings.rank, settings.seed)
    optimiser = torch.optim.Adam(head.parameters(), lr=settings.learning_rate)
    order = np.random.default_rng(settings.seed)
    rows = torch.as_tensor(np.asarray(rows, np.int64))
    for _epoch in range(1, settings.epochs + 1):
        head.train()
        shuffled = rows[torch.as_tensor(order.permutation(len(rows)))]
        for start in range(0, len(shuffled), settings.batch_size):
            if max_steps is not None and steps >= max_steps:
                break
            steps += 1
            batch = shuffled[start:start + settings.batch_size]
            if len(batch) < 2:
                continue  # one row has no in-batch negative
            negatives = batch[:, 2][batch[:, 2] >= 0]
            loss = info_nce(head(vectors[batch[:, 0]]), head(vectors[batch[:, 1]]),
                            head(vectors[negatives]) if len(negatives) else None,
                            settings.temperature)
            if settings.pull:
                loss = loss + settings.pull * head.pull()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        head.eval()
        yield head


def fit(vectors: torch.Tensor, rows: np.ndarray, settings: FitSettings,
        on_epoch: Callable[[int, AdapterHead], None] | None = None,
        max_steps: int | None = None) -> AdapterHead:
    """A head fitted on ``rows`` (:func:`fitting`) for ``settings.epochs`` epochs, or
    ``max_steps`` batches if fewer; ``on_epoch(epoch, head)`` after each (epochs count
    from 1)."""
    head = make_head(settings.head, vectors.shape[1], settings.rank, settings.seed)
    for epoch, head in enumerate(fitting(vectors, rows, settings, max_steps), 1):
        if on_epoch is not None:
            with torch.no_grad():
                on_epoch(epoch, head)
    return head
