"""What a learned ranker's score means: :class:`Calibration`, a monotone map from a score to
the probability that the pair is linked, fitted out of fold (``openmsd train ranker``); and
:func:`checked_numbers`, a stored model's numbers checked (an
:class:`~openmsd.artifact.ArtifactError` naming the field; the caller names the file)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from openmsd.artifact import ArtifactError

__all__ = ["Calibration", "checked_numbers"]


def checked_numbers(values: Any, what: str) -> list[float]:
    """``values`` as floats, or :class:`ArtifactError` naming ``what`` when one is not a
    finite number."""
    try:
        out = [float(v) for v in values]
    except (TypeError, ValueError):
        raise ArtifactError(f"{what}: expected a list of numbers") from None
    if not all(math.isfinite(v) for v in out):
        raise ArtifactError(f"{what}: a value is not a finite number")
    return out


@dataclass(frozen=True)
class Calibration:
    """A monotone map from a ranker's score to the probability that the pair is linked
    (isotonic regression's steps: ``x`` increasing, ``y`` in [0, 1]).

    >>> Calibration([0.0, 1.0], [0.1, 0.7]).probability(np.array([-1.0, 0.5, 2.0])).tolist()
    [0.1, 0.4, 0.7]
    """

    x: list[float]
    y: list[float]

    def probability(self, scores: np.ndarray) -> np.ndarray:
        """Each score's probability (``nan`` for a score that is not finite)."""
        scores = np.asarray(scores, np.float64)
        out = np.interp(np.where(np.isfinite(scores), scores, 0.0), self.x, self.y)
        return np.where(np.isfinite(scores), out, np.nan)

    def to_dict(self) -> dict[str, Any]:
        return {"x": self.x, "y": self.y}

    @classmethod
    def from_dict(cls, found: Any) -> Calibration:
        """From its stored form; :class:`ArtifactError` when it is not one."""
        if not isinstance(found, dict) or "x" not in found or "y" not in found:
            raise ArtifactError("calibration: expected {\"x\": [...], \"y\": [...]}")
        x = checked_numbers(found["x"], "calibration x")
        y = checked_numbers(found["y"], "calibration y")
        if len(x) != len(y) or not x:
            raise ArtifactError("calibration: x and y must be non-empty and of one length")
        if any(b < a for a, b in itertools.pairwise(x)):
            raise ArtifactError("calibration: x must not decrease")
        if any(not 0 <= v <= 1 for v in y):
            raise ArtifactError("calibration: y must be probabilities in [0, 1]")
        return cls(x, y)
