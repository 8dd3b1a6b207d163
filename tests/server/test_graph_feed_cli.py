"""``openmsd related --graph`` and ``openmsd watch`` on the server tests' corpus: the files
they write (SVG, PNG, Atom, HTML) parse, are the same for the same answer, keep hostile
titles inert, and each bad input gets a one-line error."""

from __future__ import annotations

import shutil
from pathlib import Path

import feedparser
import pytest
from lxml import etree, html
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.corpus import Corpus, non_papers
from tests.server.conftest import MODEL, SCRIPT_TITLE

runner = CliRunner()
SVG = "{http://www.w3.org/2000/svg}"
LIBRARY = """@article{fr, title = {Analyse syntaxique en dépendances du français}}
@article{es, title = {Análisis sintáctico de dependencias para el español}}
"""


@pytest.fixture
def corpus(served_corpus: Path, tmp_path: Path) -> Path:
    """A copy of the served corpus (a watch writes its state into the corpus)."""
    shutil.copytree(served_corpus, tmp_path / "corpus")
    return tmp_path / "corpus"


def _nodes(svg: etree._Element) -> list[etree._Element]:
    """The node elements of a picture (a link, or a group for a paper without DOI)."""
    return list(svg.find(f"{SVG}g[@class='nodes']"))


def _run(*args: str, code: int = 0) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return " ".join(result.output.split())


def test_related_graph_svg_is_deterministic_and_inert(served_corpus: Path,
                                                      tmp_path: Path) -> None:
    first, second = tmp_path / "a.svg", tmp_path / "b.svg"
    _run("related", served_corpus, "xss", "--model", MODEL, "--graph", first, "-k", "3")
    _run("related", served_corpus, "xss", "--model", MODEL, "--graph", second, "-k", "3")
    assert first.read_bytes() == second.read_bytes()  # seeded: the same picture
    svg = etree.parse(str(first)).getroot()
    nodes = _nodes(svg)
    assert len(nodes) == 31 and nodes[0].get("data-paper") == "xss"  # the query, 30 related
    assert nodes[0].find(f"{SVG}title").text.startswith(SCRIPT_TITLE)
    assert b"<script>" not in first.read_bytes() and not list(svg.iter(f"{SVG}script"))
    labels = [t for t in svg.find(f"{SVG}g[@class='labels']").iter(f"{SVG}text")]
    assert len(labels) >= 25  # most nodes labelled at N = 30, none overlapping (below)
    boxes = []
    for text in labels:
        x, y = float(text.get("x")), float(text.get("y"))
        boxes.append((x, y - 11, x + 5 * len(text.text), y))
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)


def test_related_graph_by_year_png_and_seeds(served_corpus: Path, tmp_path: Path) -> None:
    png = tmp_path / "by-year.png"
    _run("related", served_corpus, "fr-parse", "--graph", png, "--by", "year",
         "--similar-edges")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    seeds = tmp_path / "seeds.bib"
    seeds.write_text(LIBRARY, encoding="utf-8")
    svg_file = tmp_path / "library.svg"
    _run("related", served_corpus, "--seeds", seeds, "--model", MODEL, "--graph", svg_file,
         "--by", "year", "--graph-k", "10")
    svg = etree.parse(str(svg_file)).getroot()
    nodes = {node.get("data-paper"): node for node in _nodes(svg)}
    assert len(nodes) == 12
    assert svg.find(f"{SVG}g[@class='axis']") is not None
    x = {p: float(g.find(f"{SVG}circle").get("cx")) for p, g in nodes.items()}
    assert x["fr-parse"] < x["es-parse"]  # 2009 left of 2012 on the time axis


def test_graph_bad_outputs(served_corpus: Path, tmp_path: Path) -> None:
    out = _run("related", served_corpus, "fr-parse", "--graph", tmp_path / "x.jpg", code=2)
    assert "expected a file name ending in .svg or .png" in out
    assert not (tmp_path / "x.jpg").exists()
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    out = _run("related", served_corpus, "fr-parse", "--graph", blocker / "g.svg", code=2)
    assert "cannot write there" in out and "is not a writable folder" in out
    out = _run("related", served_corpus, "fr-parse", "--graph", tmp_path / "g.svg", "--by",
               "size", code=2)
    assert "--by 'size'" in out


def test_watch_first_then_nothing_new(corpus: Path, tmp_path: Path) -> None:
    seeds = tmp_path / "lib.bib"
    seeds.write_text("@article{a, title={Analyse syntaxique en dépendances du français}}\n"
                     "@article{b, title={Not in the corpus at all}}\n", encoding="utf-8")
    feed, digest = tmp_path / "feed.xml", tmp_path / "digest.html"
    out = _run("watch", corpus, "--seeds", seeds, "--atom", feed, "--html", digest, "-k", "100")
    assert "not in the corpus: title:Not in the corpus at all" in out
    records = Corpus(corpus).read("papers").num_rows
    others = non_papers(Corpus(corpus))  # errata, stubs...: left out, and counted
    assert others and "fr-parse" not in others
    papers = records - len(others)
    assert f"{len(others)} records that are not papers left out" in out
    parsed = feedparser.parse(feed.read_bytes())
    assert not parsed.bozo and len(parsed.entries) == papers - 1  # first run: all new
    assert SCRIPT_TITLE in {e.title for e in parsed.entries}
    assert not {e.id.removeprefix("urn:openmsd:paper:") for e in parsed.entries} & set(others)
    page = html.fromstring(digest.read_text(encoding="utf-8"))
    assert not page.xpath("//script") and len(page.xpath("//ol/li")) == papers - 1
    assert SCRIPT_TITLE in page.text_content()

    out = _run("watch", corpus, "--seeds", seeds, "--atom", feed)
    assert "nothing new since" in out
    parsed = feedparser.parse(feed.read_bytes())
    assert not parsed.bozo and parsed.entries == []  # empty, and valid

    out = _run("watch", corpus, "--seeds", seeds, "--since", "2000-01-01", "-k", "2", "--json")
    assert '"new": ' + str(records - 1) in out  # every new record; the ranking skips others
    out = _run("watch", corpus, "--seeds", seeds, "--since", "2000-01-01", "-k", "100", "--json",
               "--include-non-papers")
    assert out.count('"arrived": ') == records - 1 and '"left_out": {}' in out


def test_watch_bad_inputs(corpus: Path, tmp_path: Path) -> None:
    nobody = tmp_path / "nobody.txt"
    nobody.write_text("10.9999/none\n", encoding="utf-8")
    out = _run("watch", corpus, "--seeds", nobody, code=2)
    assert "none of its 1 seeds is a paper of" in out
    seeds = tmp_path / "seeds.bib"
    seeds.write_text(LIBRARY, encoding="utf-8")
    out = _run("watch", corpus, "--seeds", seeds, "--atom", tmp_path / "no" / "dir" / "f.xml",
               code=2)
    assert "--atom" in out and "cannot write there" in out
    assert not (corpus / "watch").exists()  # a failed watch records nothing
    out = _run("watch", corpus, "--seeds", tmp_path / "missing.bib", code=2)
    assert "missing.bib: no such seed file" in out
    out = _run("watch", corpus, "--seeds", seeds, "--since", "last week", code=2)
    assert "--since 'last week'" in out
