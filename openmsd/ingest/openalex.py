"""OpenAlex ``works`` snapshot: JSON Lines of Work objects (``.gz`` or plain), one work a line.

The fields read (OpenAlex Work object documentation): ``id`` (``https://openalex.org/W...``),
``doi`` (``https://doi.org/...``), ``ids`` (``openalex``, ``doi``, ``mag``, ``pmid``, ``pmcid``),
``title`` / ``display_name``, ``abstract_inverted_index`` (``{word: [positions]}``: the abstract
is rebuilt by placing every word at its positions), ``language`` (as OpenAlex declares it),
``publication_year``, ``primary_location.source.display_name`` (or the deprecated
``host_venue.display_name``), ``authorships[].author.display_name``, ``keywords[]``,
``primary_topic`` / ``topics[]`` (else ``concepts[]``) as categories, ``type`` (``article``,
``dissertation``, ``dataset``, ``preprint``...: the repository and DataCite works OpenAlex keeps
outside its core, ``is_xpac``, are mostly of the last three kinds) and ``referenced_works``
(one reference record each, targeting ``openalex:W...``).

Example line (shortened)::

    {"id": "https://openalex.org/W2741809807", "doi": "https://doi.org/10.7717/peerj.4375",
     "title": "The state of OA", "publication_year": 2018, "language": "en",
     "ids": {"openalex": "https://openalex.org/W2741809807", "mag": 2741809807,
             "pmid": "https://pubmed.ncbi.nlm.nih.gov/29456894"},
     "primary_location": {"source": {"display_name": "PeerJ"}},
     "authorships": [{"author": {"display_name": "Heather Piwowar"}}],
     "abstract_inverted_index": {"Despite": [0], "growing": [1], "interest": [2]},
     "referenced_works": ["https://openalex.org/W1964141474"]}
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from openmsd.corpus import Record, kind_of_type
from openmsd.identifiers import aliases, normalize_doi, paper_key
from openmsd.ingest.reader import Reader, as_str, as_year, json_lines
from openmsd.report import Report

FORMAT = "openalex"


class MalformedIndexError(ValueError):
    """An ``abstract_inverted_index`` that is not ``{word: [non-negative int, ...]}``."""


def rebuild_abstract(index: Any) -> str | None:
    """The abstract text of an inverted index ``{word: [positions]}``; None when it is empty.

    Raises :class:`MalformedIndexError` when the index is not a mapping of words to lists of
    integer positions, or when a position is negative and does not fit the fast path (JSON
    booleans pass as the integers 0 and 1).
    """
    if index is None:
        return None
    if type(index) is not dict:
        raise MalformedIndexError(f"expected an object, got {type(index).__name__}")
    values = index.values()
    # Fast path: non-empty lists of positions 0..n-1, each once; fill n slots in place, no
    # sorting. Anything else (a non-list, an empty list, a gap, a repeat) takes the slow path.
    if all(values):
        try:
            words: list[str | None] = [None] * sum(map(len, values))
            for word, positions in index.items():
                for position in positions:
                    words[position] = word
        except (TypeError, IndexError):  # not a list of integers, or gaps in the positions
            pass
        else:
            if None not in words:  # else a repeated position (or a negative one on a used slot)
                return " ".join(words).strip() or None  # type: ignore[arg-type]
    return _rebuild_sorted(index)


def _rebuild_sorted(index: dict[str, Any]) -> str | None:
    """The slow path of :func:`rebuild_abstract`: validate every position, sort them."""
    kinds = set(map(type, index.values())) - {list}
    if kinds:
        raise MalformedIndexError(f"positions must be lists, found {_type_names(kinds)}")
    slots: dict[int, str] = {}
    for word, positions in index.items():
        for position in positions:
            if type(position) is not int and type(position) is not bool:
                raise MalformedIndexError(
                    f"position of {word!r}: expected an integer, got {type(position).__name__}")
            if position < 0:
                raise MalformedIndexError(f"position of {word!r}: negative ({position})")
            slots[position] = word
    text = " ".join([slots[position] for position in sorted(slots)]).strip()
    return text or None


def _type_names(kinds: set[type]) -> str:
    return ", ".join(sorted(kind.__name__ for kind in kinds))


_WORK_URL = "https://openalex.org/W"
_WORK_URL_CUT = len(_WORK_URL) - 1  # keep the W


def _work_id(value: Any) -> str | None:
    """``'https://openalex.org/W12'`` or ``'W12'`` -> ``'W12'``; None if not an OpenAlex id."""
    if not isinstance(value, str):
        return None
    short = value.strip().rsplit("/", 1)[-1].upper()
    return short if short[:1] == "W" and short[1:].isdigit() else None


def _names(items: list[Any], *fields: str) -> list[str]:
    """The first non-empty string of ``fields`` of each object (or each string itself)."""
    out: list[str] = []
    for item in items:
        name = None
        if isinstance(item, str):
            name = as_str(item)
        elif isinstance(item, dict):
            for field in fields:
                name = as_str(item.get(field))
                if name:
                    break
        if name and name not in out:
            out.append(name)
    return out


def _authors(authorships: list[Any]) -> list[str]:
    out: list[str] = []
    for authorship in authorships:
        if not isinstance(authorship, dict):
            continue
        author = authorship.get("author")
        name = (as_str(author.get("display_name"), "display_name")
                if isinstance(author, dict) else None)
        name = name or as_str(authorship.get("raw_author_name"), "raw_author_name")
        if name:
            out.append(name)
    return out


def _venue(work: dict[str, Any]) -> str | None:
    location = work.get("primary_location")
    if isinstance(location, dict):
        source = location.get("source")
        if isinstance(source, dict):
            name = as_str(source.get("display_name"), "display_name")
            if name:
                return name
    host = work.get("host_venue")
    return as_str(host.get("display_name"), "display_name") if isinstance(host, dict) else None


class _Fields:
    """Typed access to a work's fields, collecting a warning for each field of the wrong type."""

    def __init__(self, work: dict[str, Any]) -> None:
        self.work = work
        self.warnings: list[str] = []

    def _wrong(self, field: str, expected: str, value: Any) -> None:
        self.warnings.append(
            f"wrong field type: {field!r} expected {expected}, got {type(value).__name__}")

    def list_of(self, field: str) -> list[Any]:
        value = self.work.get(field)
        if value is None:
            return []
        if isinstance(value, list):
            return value
        self._wrong(field, "a list", value)
        return []

    def object_of(self, field: str) -> dict[str, Any]:
        value = self.work.get(field)
        if value is None:
            return {}
        if isinstance(value, dict):
            return value
        self._wrong(field, "an object", value)
        return {}

    def text_of(self, field: str) -> str | None:
        value = self.work.get(field)
        if isinstance(value, str):
            return as_str(value)
        if value is not None:
            self._wrong(field, "a string", value)
        return None


def _categories(fields: _Fields) -> list[str]:
    topics = fields.list_of("topics")
    primary = fields.object_of("primary_topic")
    if primary or topics:
        return _names([primary, *topics], "display_name")
    return _names(fields.list_of("concepts"), "display_name")


def _doc_type(fields: _Fields, work: dict[str, Any]) -> str | None:
    """The work's ``type``; ``paratext`` for a work OpenAlex flags ``is_paratext`` whose type
    says nothing of it."""
    doc_type = fields.text_of("type")
    if work.get("is_paratext") is True and kind_of_type(doc_type) is None:
        return "paratext"
    return doc_type


def read(path: Path, report: Report) -> Iterator[Record]:
    """Yield one paper and its ``referenced_works`` references per OpenAlex work line."""
    for number, work in json_lines(path, report):
        yield from work_records(work, path, number, report)


def work_records(work: dict[str, Any], path: Path, number: int, report: Report
                 ) -> Iterator[Record]:
    """The paper and the ``referenced_works`` block of one Work object, line (or row)
    ``number`` of ``path``; nothing, with a problem reported, for a work without an id."""
    loc = f"{path.name}:{number}"
    fields = _Fields(work)
    ids = fields.object_of("ids")
    openalex_id = fields.text_of("id") or as_str(ids.get("openalex"))
    doi = normalize_doi(fields.text_of("doi") or as_str(ids.get("doi")))
    key = doi or paper_key(None, "openalex", openalex_id)
    if key is None:
        report.problem(path, f"line {number}", "missing required field: 'id' or 'doi'")
        return
    try:
        abstract = rebuild_abstract(work.get("abstract_inverted_index"))
    except MalformedIndexError as error:
        fields.warnings.append(f"malformed abstract_inverted_index: {error}")
        abstract = None
    paper = {
        "key": key,
        "aliases": aliases(doi, {
            "openalex": openalex_id,
            "pmid": as_str(ids.get("pmid")),
            "pmcid": as_str(ids.get("pmcid")),
            "mag": as_str(ids.get("mag")),
        }),
        "doi": doi,
        "title": fields.text_of("title") or fields.text_of("display_name"),
        "abstract": abstract,
        "declared_language": fields.text_of("language"),
        "year": as_year(work.get("publication_year"), "publication_year"),
        "venue": _venue(work),
        "authors": _authors(fields.list_of("authorships")),
        "keywords": _names(fields.list_of("keywords"), "display_name", "keyword"),
        "categories": _categories(fields),
        "translations": [],
        "full_text": None,
        "doc_type": _doc_type(fields, work),
        "source": FORMAT,
        "loc": loc,
    }
    references = fields.list_of("referenced_works")
    for warning in fields.warnings:
        report.problem(path, f"line {number}", warning, kind="warning")
    yield "paper", paper
    # One block of columns per work, no record per reference: a work cites ~30 others.
    shorts = [cited[_WORK_URL_CUT:] for cited in references
              if type(cited) is str and cited.startswith(_WORK_URL)]
    if len(shorts) == len(references):
        positions = list(range(len(shorts)))
    else:
        positions, shorts = _valid_references(references, path, number, report)
    if shorts:
        yield "references", {"citing": key, "position": positions, "ref_id": shorts,
                             "targets": [["openalex:" + short] for short in shorts],
                             "source": FORMAT, "loc": loc}
    report.count("openalex.referenced_works", len(references))


def _valid_references(references: list[Any], path: Path, number: int, report: Report
                      ) -> tuple[list[int], list[str]]:
    """The positions and short ids of the OpenAlex work ids in ``references``; a warning for
    each entry that is not one."""
    positions: list[int] = []
    shorts: list[str] = []
    for position, cited in enumerate(references):
        short = (cited[_WORK_URL_CUT:] if type(cited) is str and cited.startswith(_WORK_URL)
                 else _work_id(cited))
        if short is None:
            report.problem(path, f"line {number}", f"invalid referenced work: "
                           f"referenced_works[{position}] = {cited!r}", kind="warning")
            continue
        positions.append(position)
        shorts.append(short)
    return positions, shorts


_INDEX_FIRST = re.compile(rb'\{\s*"abstract_inverted_index"\s*:\s*[{n]')
_WORK_ID = re.compile(rb'"id"\s*:\s*"https://openalex\.org/W\d+"')
_WORK_FIELDS = (b'"publication_year"', b'"authorships"', b'"abstract_inverted_index"',
                b'"referenced_works"', b'"primary_location"', b'"host_venue"',
                b'"counts_by_year"', b'"cited_by_count"', b'"type_crossref"',
                b'"best_oa_location"')


def sniff(head: bytes, path: Path) -> bool:
    """JSON lines whose first object is an OpenAlex work: its ``id`` is an OpenAlex work URL
    and it has a work field, or (its ``id`` beyond the first 8 KB, keys sorted) it opens with
    ``abstract_inverted_index`` or names OpenAlex entities and has two work fields."""
    start = head.lstrip()
    if not start.startswith(b"{"):
        return False
    line = start.split(b"\n", 1)[0]
    if _INDEX_FIRST.match(line):  # only OpenAlex (and MAG before it) has this field
        return True
    fields = sum(field in line for field in _WORK_FIELDS)
    if _WORK_ID.search(line) is not None:
        return fields >= 1
    return fields >= 2 and b'"https://openalex.org/' in line


READER = Reader(FORMAT, sniff, read,
                "OpenAlex works snapshot: JSON Lines of Work objects (abstract inverted index, "
                "referenced_works)")
