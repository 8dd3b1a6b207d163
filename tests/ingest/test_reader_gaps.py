"""Three reader gaps: a wrong-typed ``translations`` is reported, an entity bomb is reported
at the line that expands it, and JATS with an internal DTD subset is recognised."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from openmsd.ingest import formats, input_records
from openmsd.ingest.reader import parse_xml
from openmsd.report import Report

ARTICLE = ('<article article-type="research-article"><front><article-meta>'
           '<article-id pub-id-type="doi">10.1234/sub</article-id><title-group>'
           '<article-title>Analyse &ndash; syntaxique</article-title></title-group>'
           '</article-meta></front></article>\n')


@pytest.mark.parametrize(("value", "field"), [
    ("an English title", "translations"),
    (["en", "a title"], "translations"),
    ({"en": "a title"}, "translations.en"),
    ({"en": {"title": {"x": 1}, "abstract": "An abstract."}}, "translations.en.title"),
])
def test_a_wrong_typed_translations_is_reported(tmp_path: Path, value, field: str) -> None:
    path = tmp_path / "papers.jsonl"
    path.write_bytes(orjson.dumps({"id": "p1", "title": "Un titre", "translations": value})
                     + b"\n")
    report = Report()
    records = list(input_records([path], formats.get_reader("jsonl"), report))
    assert [kind for kind, _ in records] == ["paper"]  # the paper is kept
    assert [(p.where, p.kind) for p in report.problems] == [("line 1", "warning")]
    assert f"wrong field type: {field!r}" in report.problems[0].reason


def test_an_entity_bomb_is_reported_at_the_line_that_expands_it(tmp_path: Path) -> None:
    levels = "".join(f'<!ENTITY e{i} "{f"&e{i - 1};" * 10}">\n' for i in range(1, 12))
    path = tmp_path / "bomb.xml"
    path.write_text(f'<?xml version="1.0"?>\n<!DOCTYPE article [\n<!ENTITY e0 "lol">\n'
                    f'{levels}]>\n<article>\n<front><article-meta><title-group><article-title>'
                    'T</article-title></title-group></article-meta></front>\n'
                    '<body><p>&e11;</p></body>\n</article>\n')
    expanding = next(n for n, line in enumerate(path.read_text().splitlines(), 1)
                     if "&e11;" in line)
    assert expanding > 10
    report = Report()
    assert parse_xml(path, report) is None
    [problem] = report.problems
    assert problem.where == f"line {expanding}", problem
    assert "amplification" in problem.reason and "line 1," not in problem.reason


@pytest.mark.parametrize("doctype", [
    '<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Publishing DTD v1.1//EN" '
    '"JATS-journalpublishing1.dtd" [\n<!ENTITY ndash "&#x2013;">\n]>',
    '<!DOCTYPE article [ <!ENTITY ndash "&#x2013;"> <!ENTITY mdash "&#x2014;"> ]>',
])
def test_jats_with_an_internal_dtd_subset_is_recognised(tmp_path: Path, doctype: str) -> None:
    path = tmp_path / "article.xml"
    path.write_text(f'<?xml version="1.0" encoding="UTF-8"?>\n{doctype}\n{ARTICLE}')
    assert formats.detect(path) is formats.get_reader("jats")
    records = list(input_records([path], None, Report()))
    [paper] = [record for kind, record in records if kind == "paper"]
    assert paper["title"].startswith("Analyse")


@pytest.mark.parametrize(("paper", "reason"), [
    ({"translations": {"english": {"title": "A title"}, "en": {"title": "The title"}}},
     "bad value: 'translations' expected a language code (ISO 639: en, pt-BR) as each key, "
     "got 'english'; that translation dropped"),
    ({"language": "French"},
     "bad value: 'language' expected a language code (ISO 639: en, pt-BR), got 'French'; "
     "identified from the text instead"),
])
def test_a_language_that_is_not_a_code_is_reported(tmp_path: Path, paper: dict,
                                                    reason: str) -> None:
    path = tmp_path / "papers.jsonl"
    path.write_bytes(orjson.dumps({"id": "p1", "title": "Un titre", **paper}) + b"\n")
    report = Report()
    [(kind, record)] = list(input_records([path], formats.get_reader("jsonl"), report))
    assert kind == "paper"
    assert [(p.where, p.kind, p.reason) for p in report.problems] == [("line 1", "warning",
                                                                       reason)]
    assert [t["language"] for t in record["translations"]] == (
        ["en"] if "translations" in paper else [])
    assert record["declared_language"] is None
