"""Identifiers: DOI normalisation, paper keys, aliases and normalised titles.

A paper's key in the corpus is its normalised DOI when it has one (as OpenMSD keys on DOIs),
otherwise ``namespace:local_id`` (``openalex:W123``, ``arxiv:2212.11867``, ``s2:77490025``), or
the bare id for generic JSONL sources that have no namespace. An *alias* is ``namespace:value``
for every identifier a paper carries (``doi:10.1590/x``, ``openalex:W123``); references name
the papers they cite by aliases, and reference resolution joins them on the alias table.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from urllib.parse import quote

_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""The bidirectional-text controls: they reorder what follows them on the screen."""


def without_bidi(text: str) -> str:
    """``text`` without its bidirectional-text controls.

    >>> without_bidi("10.1/ab\u202ecd")
    '10.1/abcd'
    """
    return _BIDI.sub("", text)


DOI_SAFE = "/:;()._-"
"""What a DOI link keeps unencoded: the DOI syntax's separators that mean the same in a URL's
path. Everything else (space, ``<``, ``"``, ``#``, ``?``, ``%``, ``+``, non-ASCII) is
percent-encoded as UTF-8, so the link is one valid URL that doi.org resolves to the DOI."""


def doi_url(doi: str) -> str:
    """The ``https://doi.org/`` link of a DOI: its bidi controls stripped (as every export id
    is), the rest percent-encoded, so nothing in it ends the URL, starts a query or a fragment,
    or breaks out of an attribute.

    >>> doi_url("10.1/a b\u202e#c?")
    'https://doi.org/10.1/a%20b%23c%3F'
    """
    return "https://doi.org/" + quote(without_bidi(doi).strip(), safe=DOI_SAFE)


_DOI_PREFIXES = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*|info:doi/)", re.IGNORECASE)
_DOI_SHAPE = re.compile(r"^10\.\d{4,9}/\S+$")


def normalize_doi(doi: str | None) -> str | None:
    """``'https://doi.org/10.1590/S0104-597'`` -> ``'10.1590/s0104-597'``; None if not a DOI."""
    if not doi:
        return None
    value = _DOI_PREFIXES.sub("", doi.strip()).strip().lower()
    return value if _DOI_SHAPE.match(value) else None


def _pmcid(value: str) -> str:
    """``'5815332'`` (as OpenAlex gives it) -> ``'PMC5815332'``."""
    return f"PMC{value}" if value.isdigit() else value


_ID_CLEANERS = {
    "openalex": lambda v: v.rsplit("/", 1)[-1].upper(),
    "arxiv": lambda v: re.sub(r"^(?:arxiv:|https?://arxiv\.org/abs/)", "", v, flags=re.I),
    "pmid": lambda v: v.rsplit("/", 1)[-1],
    "pmcid": lambda v: _pmcid(v.rstrip("/").rsplit("/", 1)[-1].upper()),
}


def alias(namespace: str, value: str | None) -> str | None:
    """``alias('openalex', 'https://openalex.org/W1')`` -> ``'openalex:W1'``; None when empty."""
    if value is None:
        return None
    value = str(value).strip()
    if not value:
        return None
    if namespace == "doi":
        doi = normalize_doi(value)
        return f"doi:{doi}" if doi else None
    clean = _ID_CLEANERS.get(namespace)
    value = clean(value) if clean else value
    return f"{namespace}:{value}" if value else None


_OMID = re.compile(r"^(?:https?://w3id\.org/oc/meta/|omid:|meta:)?(br/\d+)$", re.IGNORECASE)


def omid(value: str | None) -> str | None:
    """The alias of an OpenCitations Meta id of a bibliographic resource: ``'br/061'``,
    ``'omid:br/061'`` or ``'https://w3id.org/oc/meta/br/061'`` -> ``'omid:br/061'``; None for
    anything else.

    >>> omid("https://w3id.org/oc/meta/br/06101801781"), omid("ra/0610"), omid(None)
    ('omid:br/06101801781', None, None)
    """
    match = _OMID.match(value.strip()) if value else None
    return f"omid:{match.group(1).lower()}" if match else None


def aliases(doi: str | None, ids: Mapping[str, str | None]) -> list[str]:
    """All aliases of a paper with this DOI and these ``namespace -> id`` identifiers."""
    out = [alias("doi", doi)] + [alias(ns, v) for ns, v in ids.items() if ns != "doi"]
    return sorted({a for a in out if a})


def paper_key(doi: str | None, namespace: str | None, local_id: str | None) -> str | None:
    """The corpus key: normalised DOI, else ``namespace:local_id``, else the bare local id."""
    norm = normalize_doi(doi)
    if norm:
        return norm
    if local_id is None or not str(local_id).strip():
        return None
    if namespace is None:
        return str(local_id).strip()
    return alias(namespace, local_id)


def key_aliases(key: str) -> list[str]:
    """The aliases under which a paper key itself can be cited."""
    doi = normalize_doi(key)
    return [f"doi:{doi}"] if doi else [key]


_DOI_IN_TEXT = re.compile(r"10\.\d{4,9}/[^\s\"<>]+")


def dois_in_text(text: str | None) -> list[str]:
    """The normalised DOIs written in a text, trailing punctuation cut: ``'doi:10.1000/X.'``
    -> ``['10.1000/x']``."""
    found: list[str] = []
    for match in _DOI_IN_TEXT.finditer(text or ""):
        value = match.group(0).rstrip(".,;:")
        while value and value[-1] in ")]" and value.count(value[-1]) > value.count(
                "(" if value[-1] == ")" else "["):
            value = value[:-1].rstrip(".,;:")
        doi = normalize_doi(value)
        if doi and doi not in found:
            found.append(doi)
    return found


_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normalize_title(title: str | None) -> str:
    """Fold accents, case, punctuation: ``'L’Évaluation des  MT!'`` -> ``'l evaluation des mt'``."""
    if not title:
        return ""
    decomposed = unicodedata.normalize("NFKD", title)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _NON_WORD.sub(" ", stripped.casefold()).strip()


def first(values: Iterable[str | None]) -> str | None:
    """The first non-empty string, or None."""
    for value in values:
        if value is not None and str(value).strip():
            return value
    return None
