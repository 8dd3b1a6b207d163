"""Readers of evaluation inputs: query and document records, qrels, and task files.

Queries and documents are JSON-lines records with an ``id`` (or BEIR's ``_id``) and text from
whichever of ``title``, ``abstract``, ``context``, ``text`` they have (the caller says how they
make one text: ``text_of``). Qrels lines are ``query_id<TAB>doc_id<TAB>relevance`` (integer
grades; BEIR's header line is skipped). Task files of the merged-pool protocol are qrels files:
``query 0 doc label`` (TREC / SciDocs) or ``query<TAB>doc<TAB>label`` lines; their papers are
JSON lines or SciDocs' metadata JSON (one object: id → record). Bad lines go to the report
with their line; a file that leaves nothing to evaluate is a :class:`RetrievalEvalError`.

>>> _relevance("1.0"), _relevance("x")
(1, None)
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

import orjson

from openmsd.ingest.reader import as_str, json_lines, text_stream
from openmsd.report import Report

__all__ = ["TEXT_FIELDS", "RetrievalEvalError", "read_papers", "read_qrels", "read_records",
           "read_task"]

TEXT_FIELDS = ("title", "abstract", "context", "text")
_HEADER_SCORES = {"score", "relevance", "rel", "label", "grade"}


class RetrievalEvalError(ValueError):
    """Input that leaves nothing to evaluate: a missing or empty file, no usable record or
    judgement, no query with a relevant document."""


def _record_id(record: Mapping[str, Any]) -> str | None:
    value = record.get("id")
    return as_str(value if value is not None else record.get("_id"))


def _check_file(path: Path) -> None:
    if not path.is_file():
        raise RetrievalEvalError(f"{path}: no such file")


def _no_records(path: Path, report: Report, what: str) -> RetrievalEvalError:
    here = [p for p in report.problems
            if p.file == str(path) and not p.reason.startswith("empty file")]
    if not here:
        return RetrievalEvalError(f"{path}: empty file: no {what}")
    return RetrievalEvalError(f"{path}: no usable {what} ({len(here)} problems; first: "
                              f"{here[0].where}: {here[0].reason})")


def read_records(path: Path, report: Report, text_of: Callable[[Mapping[str, Any]], str]
                 ) -> dict[str, str]:
    """``{id: text}`` of a JSON-lines file (gzip allowed), in file order, the text of a record
    being ``text_of(record)`` (in :mod:`openmsd.eval`, the paper format of its fields).

    Malformed lines, records without an id or without text, and repeated ids (the first
    record is kept) go to ``report`` with their line and are left out.
    :class:`RetrievalEvalError` when no record is usable."""
    _check_file(path)
    records: dict[str, str] = {}
    for line, record in json_lines(path, report):
        where = f"line {line}"
        record_id = _record_id(record)
        if record_id is None:
            report.problem(path, where, "record without an id: expected 'id' or '_id'")
            continue
        text = text_of(record)
        if not text:
            report.problem(path, where, f"record without text: {record_id!r} has none of "
                                        f"{', '.join(TEXT_FIELDS)}")
            continue
        if record_id in records:
            report.problem(path, where, f"duplicate id: {record_id!r} (the first is kept)")
            continue
        records[record_id] = text
    if not records:
        raise _no_records(path, report, "records")
    return records


def _relevance(value: str) -> int | None:
    """An integer grade ("2", "1.0"), or None."""
    try:
        return int(value)
    except ValueError:
        pass
    try:
        number = float(value)
    except ValueError:
        return None
    return int(number) if number.is_integer() else None


def read_qrels(path: Path, report: Report, queries: Collection[str],
               docs: Collection[str]) -> dict[str, dict[str, int]]:
    """``{query_id: {doc_id: relevance}}`` from lines ``query_id<TAB>doc_id<TAB>relevance``.

    A first line naming the columns (BEIR's ``query-id corpus-id score``) is skipped. Lines
    with another number of fields, a relevance that is not an integer, a query id not in
    ``queries`` or a doc id not in ``docs``, and repeated pairs (the first is kept) go to
    ``report`` with their line and are left out. Grades ≤ 0 are kept: they mark a document
    judged non-relevant. :class:`RetrievalEvalError` when no judgement is usable."""
    _check_file(path)
    qrels: dict[str, dict[str, int]] = {}
    first = True
    with text_stream(path) as lines:
        for number, raw in enumerate(lines, start=1):
            line = raw.rstrip("\r\n")
            if not line.strip():
                continue
            fields = [field.strip() for field in line.split("\t")]
            where = f"line {number}"
            if first and len(fields) == 3 and fields[2].lower() in _HEADER_SCORES:
                first = False
                continue
            first = False
            if len(fields) != 3:
                report.problem(path, where, f"wrong number of fields: {len(fields)} "
                                            "tab-separated fields, expected query_id, doc_id, "
                                            "relevance")
                continue
            query_id, doc_id, grade = fields
            relevance = _relevance(grade)
            if relevance is None:
                report.problem(path, where, f"relevance not an integer: {grade!r}")
            elif query_id not in queries:
                report.problem(path, where, f"unknown query id: {query_id!r}")
            elif doc_id not in docs:
                report.problem(path, where, f"unknown doc id: {doc_id!r}")
            elif doc_id in qrels.get(query_id, {}):
                report.problem(path, where, f"duplicate judgement: {query_id!r} {doc_id!r} "
                                            "(the first is kept)")
            else:
                qrels.setdefault(query_id, {})[doc_id] = relevance
    if not qrels:
        raise _no_records(path, report, "judgements")
    return qrels


def read_task(path: Path, report: Report) -> dict[str, dict[str, int]]:
    """``{query: {doc: label}}`` of a qrels file (4 columns ``query iteration doc label``,
    whitespace-separated, or 3 tab-separated ``query doc label``). Bad lines go to
    ``report`` with their line number; :class:`RetrievalEvalError` when none is usable."""
    if not path.is_file():
        raise RetrievalEvalError(f"{path}: no such file")
    judged: dict[str, dict[str, int]] = {}
    with text_stream(path) as lines:
        for number, line in enumerate(lines, start=1):
            fields = line.split("\t") if "\t" in line else line.split()
            fields = [f.strip() for f in fields]
            if not any(fields):
                continue
            if len(fields) == 4:
                fields = [fields[0], fields[2], fields[3]]
            if len(fields) != 3:
                report.problem(path, f"line {number}", f"wrong number of fields: {len(fields)}, "
                               "expected 'query 0 doc label' or 'query<TAB>doc<TAB>label'")
                continue
            query, doc, label = fields
            try:
                judged.setdefault(query, {})[doc] = int(float(label))
            except ValueError:
                report.problem(path, f"line {number}", f"label not a number: {label!r}")
    if not judged:
        raise RetrievalEvalError(f"{path}: no usable judgement")
    return judged


def read_papers(path: Path, report: Report, text_of: Callable[[Mapping[str, Any]], str]
                ) -> dict[str, str]:
    """``{paper id: text_of(record)}`` from JSON lines, or from SciDocs' metadata JSON object."""
    if not path.is_file():
        raise RetrievalEvalError(f"{path}: no such file")
    if path.suffix == ".json":
        try:
            data = orjson.loads(path.read_bytes())
        except orjson.JSONDecodeError as error:
            raise RetrievalEvalError(f"{path}: not JSON: {error}") from error
        if not isinstance(data, dict):
            raise RetrievalEvalError(f"{path}: expected one object mapping paper ids to "
                                     "records (SciDocs metadata)")
        texts = {}
        for key, record in data.items():
            text = text_of(record) if isinstance(record, dict) else ""
            if text:
                texts[key] = text
            else:
                report.problem(path, f"key {key!r}", "record without title or abstract")
        return texts
    return read_records(path, report, text_of)
