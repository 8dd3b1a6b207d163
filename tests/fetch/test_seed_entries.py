"""A seed file with a broken entry: the entry is reported with its line and the valid ones
around it are kept (a strict reader names it as an error); openmsd's own exports read back as
seeds, a DOI holding a bidirectional-text control included."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.fetch import SeedError, read_seed_file, seeds_from_bibtex
from openmsd.ingest import ingest

runner = CliRunner()
MODEL = "muse-v3"
BIB = """@article{one, title = {Good one}, doi = {10.5555/seed.1}}
@article{two, title = {Unclosed {brace}, doi = {10.5555/seed.2}}
@article{three, title = {Good three}, doi = {10.5555/seed.3}}
"""
RIS = """TY  - JOUR
TI  - No end
DO  - 10.5555/seed.1
TY  - JOUR
TI  - Second
DO  - 10.5555/seed.2
ER  -
TY  - JOUR
TI  - Third
DO  - 10.5555/seed.3
ER  -
"""


@pytest.mark.parametrize(("name", "text", "line", "kept"), [
    ("lib.bib", BIB, 2, ["doi:10.5555/seed.1", "doi:10.5555/seed.3"]),
    ("lib.ris", RIS, 1, ["doi:10.5555/seed.2", "doi:10.5555/seed.3"]),
    ("cut.ris", "".join(RIS.splitlines(True)[3:]).rsplit("ER", 1)[0], 5,
     ["doi:10.5555/seed.2"]),
])
def test_a_broken_entry_is_told_with_its_line_and_the_others_kept(
        tmp_path: Path, name: str, text: str, line: int, kept: list[str]) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    told: list[str] = []
    assert [s.key for s in read_seed_file(path, told.append)] == kept
    [problem] = told
    assert problem.startswith(f"{path}:{line}: ") and problem.endswith("; skipped")
    with pytest.raises(SeedError, match=f"{path.name}:{line}: "):  # strict: the first, named
        read_seed_file(path)


@pytest.mark.parametrize(("text", "kept", "told"), [
    ('@string{acl = "ACL"}\n@article{a, journal = acl, doi = {10.5555/s.1}}\n'
     "@article{b, journal = nope, doi = {10.5555/s.2}}\n", ["doi:10.5555/s.1"],
     [(3, "@string 'nope' is not defined")]),
    ("@article{a, doi = {10.5555/s.1}}\n@article{a, doi = {10.5555/s.2}}\n",
     ["doi:10.5555/s.1"], [(2, "entry key 'a' used again (first at line 1)")]),
    ("% a comment\n@comment{anything}\n@article{a doi = {10.5555/s.1}}\n"
     "@article(b, doi = {10.5555/s.2})\n@article{c, doi = {10.5555/s.3}",
     ["doi:10.5555/s.2"], [(3, "not a BibTeX entry"), (5, "before the end of the file")]),
    ("@misc{r\u202eid, doi = {10.5555/evil\u202etxt.exe}, month = jan}\n",
     ["doi:10.5555/evil\u202etxt.exe"], []),
])
def test_every_broken_bibtex_block_is_told_with_its_line(
        text: str, kept: list[str], told: list[tuple[int, str]]) -> None:
    problems: list[str] = []
    assert [s.key for s in seeds_from_bibtex(text, "lib.bib", problems.append)] == kept
    assert len(problems) == len(told)
    for problem, (line, what) in zip(problems, told, strict=True):
        assert problem.startswith(f"lib.bib:{line}: ") and what in problem, problem


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six papers, one with U+202E in its DOI, embedded with muse-v3 and indexed (read only)."""
    from openmsd.corpus import Corpus
    from openmsd.index import build_index
    from openmsd.models import embed_corpus, load_model

    tmp_path = tmp_path_factory.mktemp("seeds")
    papers = tmp_path / "papers.jsonl"
    rows = [{"id": f"p{i}", "doi": f"10.5555/seed.{i}", "title": f"Parsing paper {i}",
             "abstract": "A study of parsing and treebanks.", "year": 2000 + i}
            for i in range(1, 6)]
    rows.append({"id": "rlo", "doi": "10.5555/evil\u202etxt.exe", "title": "Parsing tricks",
                 "abstract": "A study of parsing tricks.", "year": 2020})
    papers.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    ingest([papers], tmp_path / "corpus")
    embed_corpus(Corpus(tmp_path / "corpus"), load_model(MODEL), MODEL)
    build_index(Corpus(tmp_path / "corpus"), MODEL)
    return tmp_path / "corpus"


def test_a_broken_entry_is_a_warning_in_the_command_line(tmp_path: Path, corpus: Path) -> None:
    seeds = tmp_path / "lib.bib"
    seeds.write_text(BIB, encoding="utf-8")
    result = runner.invoke(app, ["related", str(corpus), "--seeds", str(seeds), "--model",
                                 MODEL, "--json"])
    assert result.exit_code == 0, result.output
    assert f"{seeds}:2: broken BibTeX block" in result.stderr
    assert "related to these 2 papers" in result.stderr


@pytest.mark.parametrize("fmt", ["bib", "ris"])
def test_an_export_reads_back_as_seeds_bidi_controls_and_all(tmp_path: Path, corpus: Path,
                                                             fmt: str) -> None:
    exported = runner.invoke(app, ["search", str(corpus), "parsing tricks", "--model", "bm25",
                                   "-k", "3", "--export", fmt])
    assert exported.exit_code == 0, exported.output
    assert "\u202e" not in exported.stdout  # stripped from every id and field
    path = tmp_path / f"lib.{fmt}"
    path.write_text(exported.stdout, encoding="utf-8")
    told: list[str] = []
    assert len(read_seed_file(path, told.append)) == 3 and told == []
    result = runner.invoke(app, ["related", str(corpus), "--seeds", str(path), "--model",
                                 MODEL, "--json"])
    assert result.exit_code == 0, result.output
    assert "related to these 3 papers" in result.stderr
    assert "not in the corpus" not in result.stderr
