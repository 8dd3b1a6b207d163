"""A relevance a person can read: the probability that a result is linked to its query (cites
it or is cited by it, is cited beside it, shares its references), where the corpus's ranker was
learned and calibrated on its own links (``openmsd train ranker``); None, shown as unrated,
where it was not. Never a share of the best result's score, which reads high for every
result whatever they are."""

from __future__ import annotations

from typing import Any

__all__ = ["UNRATED", "percent", "ranked", "ranked_locations"]

#: How an unrated relevance reads.
UNRATED = "–"


def percent(relevance: float | None) -> str:
    """A relevance (0 to 1) as a whole percentage; :data:`UNRATED` for None.

    >>> percent(0.984), percent(0.004), percent(None)
    ('98%', '0%', '–')
    """
    return UNRATED if relevance is None else f"{round(100 * relevance)}%"


def ranked(rows: list[dict[str, Any]], first: int = 1) -> list[dict[str, Any]]:
    """``rows`` (dicts, best first) with ``rank`` (from ``first``) and ``relevance`` (the
    row's own, None where it has none).

    >>> ranked([{"score": 0.8, "relevance": 0.31}, {"score": 0.6}], first=11)
    [{'score': 0.8, 'relevance': 0.31, 'rank': 11}, {'score': 0.6, 'rank': 12, 'relevance': None}]
    """
    return [{**row, "rank": first + i, "relevance": row.get("relevance")}
            for i, row in enumerate(rows)]


def ranked_locations(locations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Citation locations (``recommend``'s) with each one's papers :func:`ranked`."""
    return [{**location, "results": ranked(location["results"])} for location in locations]
