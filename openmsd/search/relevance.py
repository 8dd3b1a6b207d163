"""A score a person can read: each result's rank and its relevance as a share of the best
result's score (the fused reciprocal-rank scores of ``hybrid`` read 0.016 to 0.033 whatever
the query, and a cosine of 0.71 says little on its own)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["ranked", "ranked_locations", "relevances"]


def relevances(scores: Sequence[float], best: float | None = None) -> list[float]:
    """Each score as a share of ``best`` (default: the highest score), from 0 to 1, to two
    places; all 1.0 when the best score is not positive (nothing to scale by).

    >>> relevances([0.0328, 0.0323, 0.0164])
    [1.0, 0.98, 0.5]
    >>> relevances([0.4, 0.2], best=0.8)
    [0.5, 0.25]
    """
    top = max(scores, default=0.0) if best is None else best
    if top <= 0:
        return [1.0] * len(scores)
    return [round(min(max(score / top, 0.0), 1.0), 2) for score in scores]


def ranked(rows: list[dict[str, Any]], first: int = 1, best: float | None = None
           ) -> list[dict[str, Any]]:
    """``rows`` (dicts with a ``score``, best first) with ``rank`` (from ``first``) and
    ``relevance`` (:func:`relevances` against ``best``, default the highest score) added.

    >>> ranked([{"score": 0.8}, {"score": 0.6}], first=11, best=1.0)
    [{'score': 0.8, 'rank': 11, 'relevance': 0.8}, {'score': 0.6, 'rank': 12, 'relevance': 0.6}]
    """
    shares = relevances([row["score"] for row in rows], best)
    return [{**row, "rank": first + i, "relevance": share}
            for i, (row, share) in enumerate(zip(rows, shares, strict=True))]


def ranked_locations(locations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Citation locations (``recommend``'s) with each one's papers :func:`ranked` against
    the location's best."""
    return [{**location, "results": ranked(location["results"])} for location in locations]
