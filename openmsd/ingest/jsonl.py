"""The generic JSONL format (one paper a line), as in ``taln/papers.jsonl``.

Fields: ``id`` (required unless ``doi`` is given), ``doi``, ``title``, ``abstract``, ``keywords``,
``year``, ``venue``, ``authors``, ``language`` (declared), ``categories``, ``full_text``,
``type`` (the record's type, such as ``erratum`` or ``editorial``: see
:mod:`openmsd.corpus.kinds`), ``translations`` (``{lang: {title, abstract, keywords}}``) and
``references`` (a list of DOIs or ids of cited papers, or of objects with
``doi``/``id``/``title``/``year``/``authors``/``venue``).

A paper whose own-language title and abstract are both empty but which has exactly one
translation with text is a paper written in that language: the translation becomes its text.
``language`` and each key of ``translations`` are language codes (ISO 639, with subtags or
without: ``en``, ``pt-BR``); another value is reported, and the translation dropped or the
language identified from the text.

Example line::

    {"id": "taln-2002-poster-006", "title": "Une MétaGrammaire...", "abstract": "...",
     "year": 2002, "venue": "TALN", "authors": ["Nicolas Barrier"],
     "translations": {"en": {"title": "", "abstract": "We present ..."}}}
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from openmsd.corpus import Record, is_language_tag
from openmsd.identifiers import alias, aliases, normalize_doi, paper_key
from openmsd.ingest.reader import (
    Reader,
    as_str,
    as_str_list,
    as_year,
    bad_value,
    dropped,
    json_lines,
)
from openmsd.report import Report

FORMAT = "jsonl"


_A_LANGUAGE_TAG = "a language code (ISO 639: en, pt-BR)"


def _language(value: Any) -> str | None:
    """The declared ``language`` when it reads as a language code; else reported, None (the
    language is then identified from the text)."""
    if value is not None and not isinstance(value, str):
        dropped("language", _A_LANGUAGE_TAG, value, "identified from the text instead")
        return None
    declared = as_str(value, "language")
    if declared and not is_language_tag(declared):
        bad_value("language", _A_LANGUAGE_TAG, declared, "identified from the text instead")
        return None
    return declared


def _translations(value: Any) -> list[dict[str, Any]]:
    """``{lang: {title, abstract, keywords}}`` as translation records; a value of another type
    is dropped and reported (field ``translations`` or ``translations.LANG``)."""
    if value is None:
        return []
    if not isinstance(value, dict):
        dropped("translations", "an object {language: {title, abstract, keywords}}", value)
        return []
    out = []
    for language, fields in sorted(value.items()):
        if not is_language_tag(language):
            bad_value("translations", _A_LANGUAGE_TAG + " as each key", language,
                      "that translation dropped")
            continue
        if not isinstance(fields, dict):
            if fields is not None:
                dropped(f"translations.{language}", "an object {title, abstract, keywords}",
                        fields)
            continue
        entry = {
            "language": as_str(language),
            "title": as_str(fields.get("title"), f"translations.{language}.title"),
            "abstract": as_str(fields.get("abstract"), f"translations.{language}.abstract"),
            "keywords": as_str_list(fields.get("keywords"), f"translations.{language}.keywords"),
        }
        if entry["title"] or entry["abstract"] or entry["keywords"]:
            out.append(entry)
    return out


def _reference(citing: str, position: int, value: Any, loc: str) -> dict[str, Any] | None:
    if isinstance(value, str):
        value = {"doi": value} if normalize_doi(value) else {"id": value}
    if not isinstance(value, dict):
        return None
    targets = [t for t in (alias("doi", as_str(value.get("doi"))),
                           as_str(value.get("id"))) if t]
    title = as_str(value.get("title"), "title")
    if not targets and not title:
        return None
    return {
        "citing": citing, "position": position, "ref_id": str(position), "targets": targets,
        "title": title, "authors": as_str_list(value.get("authors"), "authors"),
        "year": as_year(value.get("year"), "year"), "venue": as_str(value.get("venue"), "venue"),
        "raw": as_str(value.get("raw"), "raw"), "source": FORMAT, "loc": loc,
    }


def paper_from_object(obj: dict[str, Any], loc: str) -> dict[str, Any] | None:
    """The paper record of one generic JSON object; None when it has neither id nor DOI."""
    doi = as_str(obj.get("doi"), "doi")
    local_id = as_str(obj.get("id"))
    key = paper_key(doi, None, local_id)
    if key is None:
        return None
    title, abstract = as_str(obj.get("title"), "title"), as_str(obj.get("abstract"), "abstract")
    keywords = as_str_list(obj.get("keywords"), "keywords")
    translations = _translations(obj.get("translations"))
    declared = _language(obj.get("language"))
    if not title and not abstract and len(translations) == 1:
        own = translations.pop()
        title, abstract, declared = own["title"], own["abstract"], declared or own["language"]
        keywords = keywords or own["keywords"]
    ids = {"id": local_id} if local_id and local_id != key else {}
    return {
        "key": key, "aliases": sorted({*aliases(doi, {}), *ids.values()}),
        "doi": normalize_doi(doi), "title": title, "abstract": abstract,
        "declared_language": declared, "year": as_year(obj.get("year"), "year"),
        "venue": as_str(obj.get("venue"), "venue"),
        "authors": as_str_list(obj.get("authors"), "authors"),
        "keywords": keywords, "categories": as_str_list(obj.get("categories"), "categories"),
        "translations": translations, "full_text": as_str(obj.get("full_text"), "full_text"),
        "doc_type": as_str(obj.get("type"), "type"),
        "source": FORMAT, "loc": loc,
    }


def read(path: Path, report: Report) -> Iterator[Record]:
    """Yield one paper (and its references) per line of a generic JSONL file."""
    for number, obj in json_lines(path, report):
        loc = f"{path.name}:{number}"
        paper = paper_from_object(obj, loc)
        if paper is None:
            report.problem(path, f"line {number}", "missing required field: 'id' or 'doi'")
            continue
        yield "paper", paper
        references = obj.get("references")
        if references is None:
            continue
        if not isinstance(references, list):
            report.problem(path, f"line {number}", "field 'references': expected a list",
                           kind="warning")
            continue
        for position, value in enumerate(references):
            reference = _reference(paper["key"], position, value, loc)
            if reference is None:
                report.problem(path, f"line {number}",
                               f"references[{position}]: expected a DOI, an id or an object "
                               "with doi, id or title", kind="warning")
                continue
            yield "reference", reference


def sniff(head: bytes, path: Path) -> bool:
    """A JSON object per line with an ``id`` and a ``title`` or ``abstract`` at the top level."""
    line = head.lstrip().split(b"\n", 1)[0]
    has_text = b'"title"' in line or b'"abstract"' in line
    return line.startswith(b"{") and b'"id"' in line and has_text


READER = Reader(FORMAT, sniff, read, "generic JSONL: one paper per line (id, title, abstract, ...)")
