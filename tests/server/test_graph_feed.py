"""The neighbourhood picture on the paper and library pages, and the feed of what is new
(/feed.atom, /feed): inline SVG and Atom that parse, hostile titles kept as text, filters
applied, and the window of the last watch served."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import feedparser
import pytest
from lxml import etree

from openmsd.corpus import Corpus
from openmsd.present import atom, digest_html
from openmsd.search import seed_set_name, watch_library, watch_state
from tests.server.conftest import MODEL, SCRIPT_TITLE

SVG = "{http://www.w3.org/2000/svg}"
ATOM = "{http://www.w3.org/2005/Atom}"


def _svg(page: str) -> etree._Element:
    """The neighbourhood SVG of a page, parsed as XML (it must be well formed)."""
    found = re.search(r'<svg xmlns="http://www.w3.org/2000/svg".*?</svg>', page, re.S)
    assert found, "no neighbourhood picture on the page"
    return etree.fromstring(found.group(0).encode())


def _papers(svg: etree._Element) -> list[str]:
    return [g.get("data-paper") for g in svg.iter(f"{SVG}a")
            if g.getparent().get("class") == "nodes"]


def test_paper_page_draws_the_neighbourhood(client) -> None:
    page = client.get("/papers/fr-parse")
    assert page.status_code == 200
    svg = _svg(page.text)
    papers = _papers(svg)
    assert papers[0] == "fr-parse" and len(papers) > 10
    assert not list(svg.iter(f"{SVG}script")) and "<script" not in page.text.split("<svg", 1)[1]
    links = {a.get("href") for a in svg.iter(f"{SVG}a")}
    assert "/papers/en-parse" in links
    # fr-parse cites en-parse and es-parse: two arrows leave the query node
    assert len([line for line in svg.iter(f"{SVG}line")
                if line.get("marker-end") == "url(#arrow)"]) >= 2
    hover = {a.get("data-paper"): a.find(f"{SVG}title").text for a in svg.iter(f"{SVG}a")}
    assert "cites the query paper" in hover["pt-parse"]  # the why, on hover
    legend = " ".join(t.text for t in svg.find(f"{SVG}g[@class='legend']").iter(f"{SVG}text"))
    assert "fr (" in legend and "es (" in legend


def test_filters_apply_to_the_picture(client) -> None:
    svg = _svg(client.get("/papers/fr-parse?lang=es&lang=pt").text)
    papers = _papers(svg)
    assert papers[0] == "fr-parse"
    languages = {a.find(f"{SVG}title").text.split("\n")[1].split(" ")[0]
                 for a in svg.iter(f"{SVG}a") if a.get("data-paper") != "fr-parse"}
    assert languages and languages <= {"es", "pt"}


def test_library_picture_filters(client) -> None:
    svg = _svg(client.get("/library?id=fr-parse&id=es-parse&lang=pt&year_from=2000").text)
    assert _papers(svg)[:2] == ["fr-parse", "es-parse"]
    hovers = [a.find(f"{SVG}title").text.split("\n")[1] for a in svg.iter(f"{SVG}a")
              if a.get("data-paper") not in ("fr-parse", "es-parse")]
    assert hovers and all(h.startswith("pt · ") for h in hovers)


def test_a_script_title_stays_text_in_the_picture(client) -> None:
    page = client.get("/library?id=xss&id=fr-parse&k=5")
    assert page.status_code == 200
    svg = _svg(page.text)
    assert SCRIPT_TITLE not in page.text
    titles = [t.text for t in svg.iter(f"{SVG}title")]
    assert any(t and t.startswith(SCRIPT_TITLE) for t in titles)  # as text, escaped
    assert not list(svg.iter(f"{SVG}script"))
    assert _papers(svg)[:2] == ["xss", "fr-parse"]


def test_feed_atom_parses_and_lists_every_paper_first(client, served_corpus: Path) -> None:
    answer = client.get("/feed.atom?seeds=fr-parse&seeds=es-parse&k=100")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/atom+xml")
    parsed = feedparser.parse(answer.content)
    assert not parsed.bozo, parsed.get("bozo_exception")
    kinds = Corpus(served_corpus).read("papers", ["kind"])["kind"].to_pylist()
    papers = kinds.count("paper")
    assert len(parsed.entries) == papers - 2  # never watched: every paper but the seeds
    every = feedparser.parse(client.get("/feed.atom?seeds=fr-parse&seeds=es-parse&k=100"
                                        "&include_non_papers=true").content)
    assert len(every.entries) == len(kinds) - 2  # and the records that are not papers
    titles = {e.title for e in parsed.entries}
    assert SCRIPT_TITLE in titles  # text, parsed back as the title it is
    assert b"<script>" not in answer.content
    entry = next(e for e in parsed.entries if e.title.startswith("Análise sintática"))
    assert entry.link.endswith("/papers/pt-parse") and "why:" in entry.summary
    assert entry.tags[0].term == "pt"


def test_feed_serves_the_window_of_the_last_watch(served_corpus: Path, tmp_path: Path,
                                                  client) -> None:
    corpus = Corpus(tmp_path / "corpus")
    shutil.copytree(served_corpus, corpus.root)
    first = watch_library(corpus, ["fr-parse"], [], MODEL, k=3)
    assert first.since is None and first.new == corpus.read("papers").num_rows - 1
    assert len(first.results) == 3
    state = watch_state(corpus, seed_set_name(["fr-parse"], []))
    assert state is not None and state["window_start"] is None
    again = watch_library(corpus, ["fr-parse"], [], MODEL)
    assert again.new == 0 and again.since is not None
    feed = etree.fromstring(atom(again, "nothing"))
    assert feed.find(f"{ATOM}entry") is None and feed.find(f"{ATOM}updated") is not None
    assert "nothing new since" in feed.find(f"{ATOM}subtitle").text
    html = digest_html(again, "<b>a title</b>")
    assert "nothing new since" in html and "<b>a title</b>" not in html


def test_feed_page_lists_and_shows(client) -> None:
    page = client.get("/feed?seeds=fr-parse&seeds=xss&k=5")
    assert page.status_code == 200
    assert "Atom feed" in page.text and SCRIPT_TITLE not in page.text
    assert page.text.count('class="result"') == 5
    assert client.get("/feed?seeds=nope").status_code == 404
    assert client.get("/feed.atom").status_code == 422
    assert "What is new for your libraries" in client.get("/feed").text


def test_feed_links_come_from_the_base_url_never_the_host_header(client,
                                                                  served_corpus: Path) -> None:
    from fastapi.testclient import TestClient

    from openmsd.server import create_app

    hostile = {"Host": "evil.example:666"}
    unset = client.get("/feed.atom?seeds=fr-parse", headers=hostile)
    assert unset.status_code == 200 and "evil.example" not in unset.text
    app = create_app(served_corpus, ["muse-v3"], watch_s=None,
                     base_url="https://papers.example.org/openmsd/")
    with TestClient(app) as configured:
        answer = configured.get("/feed.atom?seeds=fr-parse", headers=hostile)
    assert answer.status_code == 200 and "evil.example" not in answer.text
    feed = feedparser.parse(answer.text)
    links = [link["href"] for entry in feed.entries for link in entry.links
             if link["rel"] == "alternate"]
    assert links and all(h.startswith("https://papers.example.org/openmsd/papers/")
                         for h in links)
    assert feed.feed.links[0]["href"].startswith("https://papers.example.org/openmsd/feed.atom?")
    with pytest.raises(ValueError, match="--base-url"):
        create_app(served_corpus, ["muse-v3"], watch_s=None, base_url="javascript:alert(1)")
