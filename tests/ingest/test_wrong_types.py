"""Every field dropped or coerced for its type is a counted problem with file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from openmsd.ingest import formats
from openmsd.report import Report
from tests.ingest.test_fuzz import JSON, settings_

OBJ = {"x": 1}
CASES = {
    "jsonl": ({"id": "p1", "title": OBJ, "year": "abc", "authors": 42, "venue": OBJ,
               "keywords": OBJ, "language": 7, "abstract": "An abstract."},
              {"title", "year", "authors", "venue", "keywords", "language"}),
    "s2orc": ({"paper_id": "1", "title": OBJ, "abstract": "An abstract.", "year": 1e300,
               "authors": 42, "venue": OBJ, "journal": OBJ},
              {"title", "year", "authors", "venue", "journal"}),
    "openalex": ({"id": "https://openalex.org/W1", "title": OBJ, "publication_year": "abc",
                  "language": 7, "authorships": 42},
                 {"title", "publication_year", "language", "authorships"}),
    "unpaywall": ({"doi": "10.1234/x", "title": OBJ, "year": "abc", "journal_name": OBJ,
                   "z_authors": 42},
                  {"title", "year", "journal_name", "z_authors"}),
    "crossref": ({"DOI": "10.1234/x", "title": OBJ, "language": 7, "container-title": OBJ,
                  "author": 42, "subject": OBJ},
                 {"title", "language", "container-title", "author", "subject"}),
}


def _read(name: str, obj: dict, tmp_path: Path) -> tuple[Path, Report]:
    path = tmp_path / f"input-{name}"
    content = {"items": [obj]} if name == "crossref" else obj
    path.write_text(json.dumps(content) + "\n")
    report = Report()
    assert [kind for kind, _ in formats.get_reader(name).read(path, report)][:1] == ["paper"]
    return path, report


@pytest.mark.parametrize("name", sorted(CASES))
def test_wrong_typed_fields_are_reported_with_file_line_and_field(name, tmp_path):
    obj, fields = CASES[name]
    path, report = _read(name, obj, tmp_path)
    where = "items[0]" if name == "crossref" else "line 1"
    reported = {p.reason.split("'")[1] for p in report.problems
                if p.file == str(path) and p.where == where and "'" in p.reason}
    assert fields <= reported, report.problems
    assert report.counts["problems.warning"] == len(report.problems)


def test_coerced_values_are_reported(tmp_path):
    _, report = _read("jsonl", {"id": "p1", "title": "T", "authors": [1, "Ana"],
                                "language": 7, "year": 1e300}, tmp_path)
    reasons = sorted(p.reason for p in report.problems)
    assert reasons == [
        "wrong field type: 'authors[0]' expected a string, got int 1; read as '1'",
        "wrong field type: 'language' expected a language code (ISO 639: en, pt-BR), got int "
        "7; identified from the text instead",
        "wrong field type: 'year' expected a year from 1000 to 2100, got float 1e+300; "
        "dropped"]


SCALARS = ["title", "abstract", "year", "venue", "language", "doi", "full_text"]


@settings_
@given(obj=st.fixed_dictionaries({"id": st.just("p1")}, optional={
    k: JSON.filter(lambda v: isinstance(v, dict | list | bool) or v == 1e300) for k in SCALARS}))
def test_fuzz_every_wrong_scalar_of_generic_jsonl_is_in_the_report(obj, tmp_path_factory):
    try:
        line = json.dumps(obj, allow_nan=False)
    except ValueError:  # Infinity is not JSON
        assume(False)
    path = tmp_path_factory.mktemp("fuzz") / "in.jsonl"
    path.write_text(line + "\n")
    report = Report()
    list(formats.get_reader("jsonl").read(path, report))
    reported = {p.reason.split("'")[1] for p in report.problems if "'" in p.reason}
    wrong = {k for k, v in obj.items() if k != "id" and v not in ([], {}, None)}
    assert wrong <= reported, (obj, report.problems)
