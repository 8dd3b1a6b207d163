"""A DOI link, wherever openmsd builds one (the picture's nodes, the paper page, the Atom feed),
is one valid URL: the DOI's bidi controls stripped, everything a URL reads as syntax (space,
``<``, ``"``, ``#``, ``?``, ``%``) and non-ASCII percent-encoded, and doi.org still reads the
same DOI from its path."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import orjson
from lxml import etree
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.identifiers import doi_url, without_bidi
from openmsd.ingest import ingest

HOSTILE = '10.5555/a b<c"d#e?f%g\u00e9\u4e2d\u202eh'
STORED = '10.5555/a<c"d#e?f%g\u00e9\u4e2d\u202eh'  # a DOI in a corpus holds no space
URL = re.compile(r"^https://doi\.org/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-F]{2})+$")
"""An RFC 3986 URL of doi.org with a path only: no query, no fragment, nothing unencoded."""


def _resolves_to(link: str, doi: str) -> None:
    assert URL.match(link), link
    parts = urlsplit(link)
    assert (parts.scheme, parts.netloc, parts.query, parts.fragment) == ("https", "doi.org",
                                                                         "", "")
    assert unquote(parts.path[1:], errors="strict") == without_bidi(doi)


def test_a_hostile_doi_gives_one_encoded_link() -> None:
    link = doi_url(HOSTILE)
    _resolves_to(link, HOSTILE)
    assert link == ("https://doi.org/10.5555/a%20b%3Cc%22d%23e%3Ff%25g%C3%A9%E4%B8%AD" + "h")
    assert doi_url("10.1590/s0104-59702013000100002") == (
        "https://doi.org/10.1590/s0104-59702013000100002")  # a plain DOI is left as it is


def _corpus(tmp_path: Path) -> Path:
    papers = tmp_path / "papers.jsonl"
    papers.write_bytes(b"".join(orjson.dumps(p) + b"\n" for p in [
        {"id": "hostile", "doi": STORED, "title": "Parsing tricks",
         "abstract": "About parsing tricks.", "year": 2020},
        {"id": "plain", "title": "Parsing French", "abstract": "About parsing tricks.",
         "year": 2019}]))
    ingest([papers], tmp_path / "corpus")
    return tmp_path / "corpus"


def test_the_pictures_doi_link_is_encoded(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    picture = tmp_path / "g.svg"
    result = CliRunner().invoke(app, ["related", str(corpus), "plain", "--model", "bm25",
                                      "--graph", str(picture)])
    assert result.exit_code == 0, result.output
    svg = etree.parse(str(picture))
    links = svg.xpath("//svg:a/@href", namespaces={"svg": "http://www.w3.org/2000/svg"})
    assert links, picture.read_text(encoding="utf-8")
    for link in links:
        _resolves_to(link, STORED)


def test_the_paper_pages_doi_link_is_encoded(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from openmsd.corpus import Corpus
    from openmsd.index import build_index
    from openmsd.models import embed_corpus, load_model
    from openmsd.server import create_app

    corpus = _corpus(tmp_path)
    embed_corpus(Corpus(corpus), load_model("muse-v3"), "muse-v3")
    build_index(Corpus(corpus), "muse-v3")
    with TestClient(create_app(corpus, ["muse-v3"], watch_s=None)) as client:
        page = client.get("/papers/" + quote(STORED.lower(), safe=""))
    assert page.status_code == 200, page.text
    html = etree.HTML(page.text)
    links = html.xpath("//a[@class='doi']/@href")
    assert len(links) == 1
    _resolves_to(links[0], STORED)
