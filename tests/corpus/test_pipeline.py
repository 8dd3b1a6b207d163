"""Ingest + build on hand-written generic JSONL: merging, resolution, idempotence, atomicity."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from openmsd.corpus import LOCK, TABLES, Corpus, CorpusError
from openmsd.ingest import ingest
from openmsd.report import IngestError

FR = ("Nous présentons un analyseur syntaxique robuste pour le français écrit, évalué sur un "
      "corpus journalistique annoté en dépendances.")
EN = ("We present a robust syntactic parser for written French, evaluated on a newspaper corpus "
      "annotated with dependencies.")


def write_jsonl(path: Path, rows: list[dict | str]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def papers_by_id(corpus: Path) -> dict[str, dict]:
    return {r["paper_id"]: r for r in Corpus(corpus).read("papers").to_pylist()}


def test_merge_keeps_first_non_null_per_field_and_every_source(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [
        {"id": "a1", "doi": "10.1234/X", "title": "Analyse syntaxique robuste", "year": 2003}])
    b = write_jsonl(tmp_path / "b.jsonl", [
        {"id": "b7", "doi": "https://doi.org/10.1234/x", "title": "Another title",
         "abstract": FR, "venue": "TALN", "authors": ["A. Martin"]}])
    ingest([a, b], tmp_path / "c", fmt="jsonl")
    papers = papers_by_id(tmp_path / "c")
    assert list(papers) == ["10.1234/x"]
    paper = papers["10.1234/x"]
    assert paper["title"] == "Analyse syntaxique robuste"  # first input wins
    assert paper["abstract"] == FR and paper["venue"] == "TALN"  # filled from the second
    assert paper["year"] == 2003 and paper["authors"] == ["A. Martin"]
    assert paper["sources"] == ["jsonl"]
    assert paper["aliases"] == ["a1", "b7", "doi:10.1234/x"]
    assert paper["language"] == "fr" and paper["language_confidence"] > 0.9


def _corpus_files(root: Path) -> dict[str, bytes]:
    return {name: (root / f"{name}.parquet").read_bytes() for name in TABLES}


def test_reingest_is_a_no_op_and_fresh_builds_are_identical(tmp_path):
    src = write_jsonl(tmp_path / "p.jsonl", [
        {"id": "p1", "title": "Un analyseur", "abstract": FR, "references": ["p2"]},
        {"id": "p2", "title": "A parser", "abstract": EN}])
    first = ingest([src], tmp_path / "c1", fmt="jsonl")
    before = _corpus_files(tmp_path / "c1")
    again = ingest([src], tmp_path / "c1", fmt="jsonl")
    assert first.staged and again.unchanged == [str(src.resolve())] and not again.staged
    assert _corpus_files(tmp_path / "c1") == before
    ingest([src], tmp_path / "c2", fmt="jsonl")
    assert _corpus_files(tmp_path / "c2") == before


def test_incremental_ingest_equals_ingesting_everything_at_once(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [{"id": "p1", "title": "Un analyseur", "abstract": FR,
                                            "references": ["p2", "10.9999/unknown"]}])
    b = write_jsonl(tmp_path / "b.jsonl", [{"id": "p2", "title": "A parser", "abstract": EN}])
    ingest([a], tmp_path / "inc", fmt="jsonl")
    assert Corpus(tmp_path / "inc").read("citations").num_rows == 0
    ingest([b], tmp_path / "inc", fmt="jsonl")
    ingest([a, b], tmp_path / "all", fmt="jsonl")
    assert _corpus_files(tmp_path / "inc") == _corpus_files(tmp_path / "all")
    citations = Corpus(tmp_path / "inc").read("citations").to_pylist()
    assert [(c["citing_id"], c["cited_id"]) for c in citations] == [("p1", "p2")]


def test_changed_input_replaces_its_part(tmp_path):
    src = write_jsonl(tmp_path / "p.jsonl", [{"id": "p1", "title": "Old title"}])
    ingest([src], tmp_path / "c", fmt="jsonl")
    write_jsonl(src, [{"id": "p1", "title": "New title"}, {"id": "p3", "title": "Third"}])
    result = ingest([src], tmp_path / "c", fmt="jsonl")
    assert result.staged
    papers = papers_by_id(tmp_path / "c")
    assert papers["p1"]["title"] == "New title" and "p3" in papers
    assert len(list((tmp_path / "c" / "staged").iterdir())) == 1


def test_bad_records_are_reported_counted_and_the_rest_ingested(tmp_path):
    src = write_jsonl(tmp_path / "bad.jsonl", [
        {"id": "p1", "title": "Un analyseur", "abstract": FR,
         "references": ["p1", "p2", "10.5555/outside", 42]},
        '{"id": "broken", "title": ',
        {"title": "no id here"},
        "[1, 2]",
        {"id": "p2", "title": "A parser", "abstract": EN},
        {"id": "p2", "title": "A parser, again", "venue": "ACL"},
    ])
    result = ingest([src], tmp_path / "c", fmt="jsonl")
    by_reason = result.report["problems_by_reason"]
    assert by_reason["malformed JSON"] == 1
    assert by_reason["missing required field"] == 1
    assert by_reason["expected a JSON object, got list"] == 1
    assert by_reason["duplicate id"] == 1
    assert by_reason["self-citation"] == 1
    assert by_reason["references[3]"] == 1
    wheres = {(p.reason.split(":")[0], p.where) for p in result.problems}
    assert ("malformed JSON", "line 2") in wheres and ("duplicate id", "line 6") in wheres
    papers = papers_by_id(tmp_path / "c")
    assert set(papers) == {"p1", "p2"} and papers["p2"]["venue"] == "ACL"
    refs = {r["position"]: r["resolution"] for r in Corpus(tmp_path / "c").read("references")
            .to_pylist()}
    assert refs == {0: "self", 1: "id", 2: "unresolved"}
    saved = json.loads((tmp_path / "c" / "ingest_report.json").read_text())
    assert saved["problems"] == len(result.problems) == 6
    assert len((tmp_path / "c" / "problems.jsonl").read_text().splitlines()) == 6


def test_strict_mode_fails_on_the_first_problem_and_writes_nothing(tmp_path):
    src = write_jsonl(tmp_path / "bad.jsonl", [{"id": "p1", "title": "x"}, "{nope"])
    with pytest.raises(IngestError, match=r"bad.jsonl: line 2: malformed JSON"):
        ingest([src], tmp_path / "c", fmt="jsonl", strict=True)
    assert not list((tmp_path / "c" / "staged").iterdir())
    with pytest.raises(CorpusError):
        Corpus(tmp_path / "c").check()


def test_a_crash_during_build_leaves_the_previous_corpus_whole(tmp_path):
    src = write_jsonl(tmp_path / "p.jsonl", [{"id": "p1", "title": "Un analyseur", "abstract": FR}])
    ingest([src], tmp_path / "c", fmt="jsonl")
    before = _corpus_files(tmp_path / "c")
    more = write_jsonl(tmp_path / "q.jsonl", [{"id": "q1", "title": "A parser", "abstract": EN}])

    def crash(texts):
        raise RuntimeError("power cut")

    with pytest.raises(RuntimeError, match="power cut"):
        ingest([more], tmp_path / "c", fmt="jsonl", identifier=crash)
    assert _corpus_files(tmp_path / "c") == before
    assert Corpus(tmp_path / "c").check()
    leftovers = [p for p in (tmp_path / "c").rglob("*") if p.name.startswith(".")
                 and p.name != LOCK]  # the lock file stays: removing it would race
    assert leftovers == []


def test_references_resolve_by_exact_fuzzy_and_translated_titles_not_ambiguous(tmp_path):
    src = write_jsonl(tmp_path / "p.jsonl", [
        {"id": "target", "title": "Analyse syntaxique robuste du français écrit", "year": 2003,
         "translations": {"en": {"title": "Robust parsing of written French"}}},
        {"id": "twin1", "title": "Un corpus arboré pour le français", "year": 2004},
        {"id": "twin2", "title": "Un corpus arboré pour le français", "year": 2004},
        {"id": "citing", "title": "Citer", "year": 2006, "references": [
            {"title": "Analyse syntaxique robuste du francais ecrit.", "year": 2003},
            {"title": "Analyse syntaxique robuste du français écrits", "year": 2003},
            {"title": "Robust Parsing of Written French", "year": 2004},
            {"title": "Un corpus arboré pour le français", "year": 2004},
            {"title": "Analyse syntaxique robuste du français écrit", "year": 1990},
            {"title": "Something else entirely, never published", "year": 2003},
        ]},
    ])
    ingest([src], tmp_path / "c", fmt="jsonl")
    refs = Corpus(tmp_path / "c").read("references").to_pylist()
    got = [(r["cited_id"], r["resolution"]) for r in refs]
    assert got == [("target", "title"), ("target", "title-fuzzy"), ("target", "title"),
                   (None, "ambiguous"), (None, "unresolved"), (None, "unresolved")]
    assert Corpus(tmp_path / "c").read("citations").num_rows == 1


def test_tables_carry_the_schema_and_version(tmp_path):
    src = write_jsonl(tmp_path / "p.jsonl", [{"id": "p1", "title": "x"}])
    ingest([src], tmp_path / "c", fmt="jsonl")
    for name, schema in TABLES.items():
        written = pq.read_schema(tmp_path / "c" / f"{name}.parquet")
        assert written.names == schema.names
        assert [f.type for f in written] == [f.type for f in schema]
        assert written.metadata[b"openmsd.schema_version"] == b"1"


def test_not_a_corpus_and_missing_inputs_are_clear_errors(tmp_path):
    with pytest.raises(CorpusError, match="not a corpus directory"):
        Corpus(tmp_path).check()
    with pytest.raises(IngestError, match="no such file or directory"):
        ingest([tmp_path / "missing.jsonl"], tmp_path / "c")
    (tmp_path / "empty").mkdir()
    with pytest.raises(IngestError, match="empty folder"):
        ingest([tmp_path / "empty"], tmp_path / "c")


def test_languages_of_unchanged_papers_are_not_identified_again(tmp_path):
    seen: list[str] = []

    def counting(texts):
        seen.extend(texts)
        return [("fr", 0.99)] * len(texts)

    a = write_jsonl(tmp_path / "a.jsonl", [{"id": "p1", "title": "Un analyseur", "abstract": FR}])
    ingest([a], tmp_path / "c", fmt="jsonl", identifier=counting)
    assert len(seen) == 1
    b = write_jsonl(tmp_path / "b.jsonl", [{"id": "p2", "title": "A parser", "abstract": EN}])
    ingest([b], tmp_path / "c", fmt="jsonl", identifier=counting)
    assert len(seen) == 2 and seen[1].startswith("A parser")
    write_jsonl(a, [{"id": "p1", "title": "Un analyseur robuste", "abstract": FR}])
    ingest([a], tmp_path / "c", fmt="jsonl", identifier=counting)
    assert len(seen) == 3 and seen[2].startswith("Un analyseur robuste")
    assert papers_by_id(tmp_path / "c")["p2"]["language"] == "fr"  # kept from the first build


def test_references_resolve_by_one_or_several_identifiers(tmp_path):
    src = write_jsonl(tmp_path / "p.jsonl", [
        {"id": "p1", "title": "Citing", "references": [
            "p2",                                          # one identifier
            {"doi": "10.1234/two", "id": "p2"},            # two, both naming p2
            {"doi": "10.1234/two", "id": "p3"},            # two, naming two papers
            {"doi": "10.1234/none", "id": "nowhere"},      # two, naming none
            "x1",                                          # one, held by two papers
            "p1"]},                                        # itself
        {"id": "p2", "doi": "10.1234/two", "title": "Two"},
        {"id": "p3", "title": "Three"},
        {"id": "x1", "doi": "10.1234/a", "title": "A"},
        {"id": "x1", "doi": "10.1234/b", "title": "B"}])
    ingest([src], tmp_path / "c", fmt="jsonl")
    refs = Corpus(tmp_path / "c").read("references").to_pylist()
    assert [(r["cited_id"], r["resolution"]) for r in refs] == [
        ("10.1234/two", "id"), ("10.1234/two", "id"), (None, "ambiguous"),
        (None, "unresolved"), (None, "ambiguous"), ("p1", "self")]
    citations = Corpus(tmp_path / "c").read("citations").to_pylist()
    assert [(c["citing_id"], c["cited_id"]) for c in citations] == [("p1", "10.1234/two")]


def test_ingest_reports_seconds_per_phase(tmp_path):
    src = write_jsonl(tmp_path / "p.jsonl", [
        {"id": "p1", "title": "Un analyseur", "abstract": FR, "references": ["p2"]},
        {"id": "p2", "title": "A parser", "abstract": EN}])
    first = ingest([src], tmp_path / "c", fmt="jsonl")
    assert list(first.phases) == ["stage", "identify", "resolve references", "write"]
    assert all(seconds > 0 for seconds in first.phases.values())
    again = ingest([src], tmp_path / "c", fmt="jsonl")  # unchanged: nothing staged
    assert again.phases["stage"] == 0 and again.phases["write"] > 0


def test_progress_counts_every_record_read_a_thousand_at_a_time(tmp_path):
    src = write_jsonl(tmp_path / "p.jsonl", [
        {"id": f"p{i}", "title": f"Paper {i}", "references": [f"p{i + 1}", f"p{i + 2}"]}
        for i in range(1500)])
    told: dict[str, list[int]] = {}

    def start(label, total):
        return told.setdefault(label, []).append

    ingest([src], tmp_path / "c", fmt="jsonl", progress=start)
    reading = told["reading p.jsonl"]
    assert sum(reading) == 1500 * 3 and max(reading) == 1000 and len(reading) == 5
