"""Seeds (BibTeX, RIS, ids, Zotero), ``openmsd fetch crossref`` and the commands' bad input."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.fetch import SeedError, read_seed_file, seeds_from_zotero
from openmsd.ingest import ingest
from tests.fetch.apiserver import OPENALEX_KEY, ZOTERO_KEY, Server, zotero_item

runner = CliRunner()


def test_seed_files(tmp_path: Path) -> None:
    bib = tmp_path / "lib.bib"
    bib.write_text("@article{x, doi = {10.5555/test.1001}}\n"
                   "@article{y, eprint = {2101.00001}, archivePrefix = {arXiv}}\n"
                   "@article{z, title = {Un corpus {arboré}}}\n", encoding="utf-8")
    assert [(s.key, s.title) for s in read_seed_file(bib)] == [
        ("doi:10.5555/test.1001", None), ("doi:10.48550/arxiv.2101.00001", None),
        (None, "Un corpus arboré")]
    ris = tmp_path / "lib.ris"
    ris.write_text("TY  - JOUR\nTI  - A title\nDO  - 10.5555/test.1002\nER  - \n",
                   encoding="utf-8")
    assert [s.key for s in read_seed_file(ris)] == ["doi:10.5555/test.1002"]
    ids = tmp_path / "ids.txt"
    ids.write_text("W1001  # a comment\n\nhttps://doi.org/10.5555/test.1003\n")
    assert [s.origin for s in read_seed_file(ids)] == [f"{ids}:1", f"{ids}:3"]


@pytest.mark.parametrize(("text", "expected"), [
    ("hello world\n", "lib.txt:1: 'hello world' is not"),
    ("@article{broken, title = {no end\n", r"lib\.bib:1: broken BibTeX block"),
    ("", "no seed"), (b"\xff\xfe\x00".decode("latin-1"), "not an OpenAlex id")])
def test_a_seed_file_that_is_not_bibtex_or_ris(tmp_path: Path, text: str,
                                               expected: str) -> None:
    path = tmp_path / ("lib.bib" if text.startswith("@") else "lib.txt")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SeedError, match=expected):
        read_seed_file(path)
    result = runner.invoke(app, ["fetch", "openalex", "--seeds", str(path), "--out",
                                 str(tmp_path / "w.jsonl.gz")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert str(path) in result.output and not (tmp_path / "w.jsonl.gz").exists()


def test_unreachable_api_is_a_clear_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["fetch", "openalex", "W1", "--out", str(tmp_path / "w.jsonl"),
                                 "--api-url", "http://127.0.0.1:9", "--retries", "0"])
    assert result.exit_code == 2 and "unreachable" in result.output
    assert "host=" not in result.output and "Connection(" not in result.output
    assert not (tmp_path / "w.jsonl").exists()
    result = runner.invoke(app, ["fetch", "openalex", "--filter", "language", "--out",
                                 str(tmp_path / "w.jsonl")])
    assert result.exit_code == 2 and "expected FIELD:VALUE" in result.output


def test_zotero_collection_as_seeds(api: Server, tmp_path: Path) -> None:
    api.world.zotero["users/42/ABCD1234"] = [
        zotero_item(f"K{i}", f"Paper {i}", f"10.5555/test.{1001 + i}" if i % 2 else None)
        for i in range(30)]  # more than one page of 25
    seeds = seeds_from_zotero("user:42", "ABCD1234", ZOTERO_KEY, api.zotero)
    assert len(seeds) == 30 and seeds[1].key == "doi:10.5555/test.1002"
    assert seeds[0].key is None and seeds[0].title == "Paper 0"
    with pytest.raises(SeedError, match="refused the key"):
        seeds_from_zotero("user:42", "ABCD1234", "wrong", api.zotero)
    with pytest.raises(SeedError, match="no such Zotero"):
        seeds_from_zotero("user:42", "NOPE", ZOTERO_KEY, api.zotero)
    out = tmp_path / "w.jsonl"
    result = runner.invoke(app, ["fetch", "openalex", "--zotero", "user:42",
                                 "--zotero-collection", "ABCD1234", "--zotero-key", ZOTERO_KEY,
                                 "--zotero-url", api.zotero, "--api-url", api.openalex,
                                 "--api-key", OPENALEX_KEY, "--depth", "0", "--out", str(out),
                                 "--json"])
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout[result.stdout.index("{"):])
    assert report["works"] >= 6 and report["unresolved"]


def test_fetch_crossref_fills_what_openalex_lacks(api: Server, tmp_path: Path) -> None:
    works = tmp_path / "w.jsonl"
    runner.invoke(app, ["fetch", "openalex", "W1005", "W1004", "--depth", "0", "--out",
                        str(works), "--api-url", api.openalex])
    api.world.fault("/crossref/works/", 429, headers={"Retry-After": "0"})
    out = tmp_path / "crossref.json"
    result = runner.invoke(app, ["fetch", "crossref", "10.5555/nothing", "--lacking-in",
                                 str(works), "--out", str(out), "--api-url", api.crossref,
                                 "--mailto", "me@example.org", "--plus-token", "t0k",
                                 "--json"])
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout[result.stdout.index("{"):])
    # W1005 lacks an abstract, W1004 references: both asked; Crossref knows only 10.5555/test.1005
    assert report["works"] == 1
    assert {u["doi"] for u in report["unresolved"]} == {"10.5555/nothing", "10.5555/test.1004"}
    asked = [(p, h) for p, h in zip(api.world.log, api.world.headers, strict=True)
             if p.startswith("/crossref/")]
    assert asked and all("mailto=me%40example.org" in p for p, _ in asked)
    assert all(h.get("Crossref-Plus-API-Token") == "Bearer t0k" for _, h in asked)
    built = ingest([works, out], tmp_path / "corpus")
    assert built.report["counts"]["papers"] == 2 and built.report["problems"] == 0


def test_crossref_without_a_mailto_is_one_line_and_fetches_nothing(
        api: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CROSSREF_MAILTO")
    out = tmp_path / "crossref.json"
    result = runner.invoke(app, ["fetch", "crossref", "10.5555/test.1005", "--out", str(out),
                                 "--api-url", api.crossref])
    assert result.exit_code == 2 and "give --mailto" in result.output
    assert not any(p.startswith("/crossref/") for p in api.world.log) and not out.exists()
    result = runner.invoke(app, ["fetch", "crossref", "10.5555/test.1005", "--out", str(out),
                                 "--api-url", api.crossref, "--mailto", "not-an-address"])
    assert result.exit_code == 2 and "expected an e-mail address" in result.output
