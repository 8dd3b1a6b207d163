"""OpenAlex work ids and the ``/works/{key}`` keys of seeds (no API client needed)."""

from __future__ import annotations

import re
from typing import Any

from openmsd.identifiers import normalize_doi

__all__ = ["seed_path", "work_id"]

_ARXIV = re.compile(r"^(?:arxiv:)?(\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?$",
                    re.IGNORECASE)
_WORK = re.compile(r"^(?:https?://(?:api\.)?openalex\.org/(?:works/)?)?(W\d+)$", re.IGNORECASE)


def work_id(value: Any) -> str | None:
    """``'https://openalex.org/W12'`` or ``'W12'`` -> ``'W12'``; None if not a work id."""
    if not isinstance(value, str):
        return None
    match = _WORK.match(value.strip())
    return match.group(1).upper() if match else None


def seed_path(seed: str) -> str | None:
    """The ``/works/{id}`` key of a seed: an OpenAlex id, a DOI (any form), an arXiv id (as
    its DataCite DOI ``10.48550/arXiv.ID``) or ``pmid:N``; None if it is none of these.

    >>> for s in ("W2741809807", "https://doi.org/10.7717/PEERJ.4375", "arXiv:2101.00001v2",
    ...           "pmid:29456894", "hello"):
    ...     print(seed_path(s))
    W2741809807
    doi:10.7717/peerj.4375
    doi:10.48550/arxiv.2101.00001
    pmid:29456894
    None
    """
    seed = seed.strip()
    if wid := work_id(seed):
        return wid
    if match := _ARXIV.match(seed):
        return f"doi:10.48550/arxiv.{match.group(1).lower()}"
    if seed.lower().startswith("pmid:") and seed[5:].strip().isdigit():
        return f"pmid:{seed[5:].strip()}"
    doi = normalize_doi(seed.removeprefix("doi:").removeprefix("DOI:"))
    return f"doi:{doi}" if doi else None
