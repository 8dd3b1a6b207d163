"""The second stage's learned fusion as a trained MP-BERT4CR model stores it (``rerank`` in its
``citrec.json``): named features and their weights. Fitting it and ranking with it are
:mod:`openmsd.rank.citrec.rerank`'s.

>>> fusion = RerankFusion(("prefetch", "manuscript"), (0.1, 1.0))
>>> RerankFusion.of(fusion.as_dict()) == fusion
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["PREFETCH", "RerankFusion"]

PREFETCH = "prefetch"
"""The feature of the prefetch's own order: minus the log of its rank."""


@dataclass(frozen=True)
class RerankFusion:
    """Weights of named features (the rerank stage's, :mod:`openmsd.rank.citrec.rerank`); the
    score is their weighted sum."""

    features: tuple[str, ...]
    coefficients: tuple[float, ...]

    def score(self, features: np.ndarray) -> np.ndarray:
        """(candidates, len(features)) feature rows → a score per candidate."""
        return features @ np.asarray(self.coefficients, np.float64)

    def as_dict(self) -> dict[str, Any]:
        return {"features": list(self.features),
                "coefficients": [round(float(c), 6) for c in self.coefficients]}

    @classmethod
    def of(cls, value: Mapping[str, Any]) -> RerankFusion:
        """The fusion :meth:`as_dict` wrote; ValueError naming what is wrong."""
        try:
            features = tuple(str(f) for f in value["features"])
            coefficients = tuple(float(c) for c in value["coefficients"])
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"rerank: expected {{'features': [...], 'coefficients': [...]}}, "
                             f"got {value!r} ({error})") from None
        if len(features) != len(coefficients) or PREFETCH not in features:
            raise ValueError(f"rerank: {len(features)} features {features} but "
                             f"{len(coefficients)} coefficients (the prefetch must be one)")
        return cls(features, coefficients)
