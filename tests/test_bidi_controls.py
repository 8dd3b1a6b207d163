"""Bidirectional-text controls in corpus text (a title that reorders what follows it on the
screen) never reach a terminal table, an export or a web page."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.export import bibtex, csl_json, ris
from openmsd.ingest import ingest
from openmsd.present.xml_text import xml_text
from openmsd.server import pages

CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
TITLE = "Parsing \u202eevil\u202c tricks \u2066and\u2069 \u200fmarks\u200e\u061c"
SHOWN = "Parsing evil tricks and marks"


def _clean(text: str) -> bool:
    return not any(c in text for c in CONTROLS)


def test_no_bidi_control_in_a_cli_table(tmp_path: Path) -> None:
    papers = tmp_path / "papers.jsonl"
    papers.write_bytes(b"".join(orjson.dumps(p) + b"\n" for p in [
        {"id": "rlo", "title": TITLE, "abstract": "About parsing tricks.", "year": 2020,
         "authors": ["Ana \u202eSilva"]},
        {"id": "plain", "title": "Parsing French", "abstract": "About parsing.", "year": 2019}]))
    ingest([papers], tmp_path / "corpus")
    result = CliRunner().invoke(app, ["search", str(tmp_path / "corpus"), "parsing tricks",
                                      "--model", "bm25"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert SHOWN in result.output and _clean(result.output)
    for fmt in ("bib", "ris", "csl"):
        exported = CliRunner().invoke(app, ["search", str(tmp_path / "corpus"), "tricks",
                                            "--model", "bm25", "--export", fmt])
        assert exported.exit_code == 0, exported.output
        assert _clean(exported.output), fmt


@pytest.mark.parametrize("export", [bibtex, ris, csl_json])
def test_no_bidi_control_in_an_export(export) -> None:
    text = export([{"paper_id": "10.5555/evil\u202etxt.exe", "title": TITLE,
                    "authors": ["Ana \u202eSilva"], "venue": "\u2067Revista\u2069",
                    "year": 2020, "doi": "10.5555/evil\u202etxt.exe"}])
    assert SHOWN in text and "Revista" in text and _clean(text)  # ids (RIS ID, CSL id) too


def test_a_doi_link_is_percent_encoded_without_bidi_controls() -> None:
    from openmsd.identifiers import doi_url

    link = doi_url("10.5555/evil\u202etxt.exe <b>")
    assert link == "https://doi.org/10.5555/eviltxt.exe%20%3Cb%3E"


def test_no_bidi_control_in_html() -> None:
    html = pages.env.from_string("<p>{{ title }}</p>").render(title=TITLE)
    assert html == f"<p>{SHOWN}</p>"


def test_no_bidi_control_in_a_picture_or_a_feed(tmp_path: Path) -> None:
    papers = tmp_path / "papers.jsonl"
    papers.write_bytes(b"".join(orjson.dumps(p) + b"\n" for p in [
        {"id": "rlo", "title": TITLE, "abstract": "About parsing tricks.", "year": 2020},
        {"id": "plain", "title": "Parsing French", "abstract": "About parsing tricks.",
         "year": 2019}]))
    ingest([papers], tmp_path / "corpus")
    picture = tmp_path / "g.svg"
    result = CliRunner().invoke(app, ["related", str(tmp_path / "corpus"), "plain", "--model",
                                      "bm25", "--graph", str(picture)])
    assert result.exit_code == 0, result.output
    text = picture.read_text(encoding="utf-8")
    assert SHOWN in text and _clean(text)
    assert xml_text(TITLE) == SHOWN  # the text of every SVG, Atom feed and digest


def test_json_output_escapes_bidi_controls(tmp_path: Path) -> None:
    """``--json`` keeps the text as it is, its bidi controls written as ``\\uXXXX`` escapes: the
    same JSON value, nothing reordered on a terminal."""
    papers = tmp_path / "papers.jsonl"
    papers.write_bytes(orjson.dumps({"id": "rlo", "title": TITLE, "abstract": "Tricks.",
                                     "year": 2020}) + b"\n")
    ingest([papers], tmp_path / "corpus")
    for args in (["search", str(tmp_path / "corpus"), "tricks", "--model", "bm25", "--json"],
                 ["corpus", "query", str(tmp_path / "corpus"), "SELECT title FROM papers",
                  "--json"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        assert _clean(result.stdout) and "\\u202e" in result.stdout
        parsed = orjson.loads(result.stdout)  # the title as it is, controls and all
        assert TITLE in json.dumps(parsed, ensure_ascii=False)
