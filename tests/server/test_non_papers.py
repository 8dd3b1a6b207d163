"""The API and the pages leave out records that are not papers, count them, and include them
with ``include_non_papers``."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from lxml import html

LEFT_OUT = {"erratum": 2, "editorial": 2, "book-review": 1}  # the sample's SciELO non-papers
NON_PAPERS = {"10.1590/1980-54702020v26e0188", "10.1590/1678-460x202257175video",
              "10.1590/2176-4573p59384"}


def test_api_counts_what_it_left_out_and_includes_it_on_request(client) -> None:
    papers = client.get("/api/papers/fr-parse/related?k=60").json()
    assert papers["left_out"] == LEFT_OUT
    assert not NON_PAPERS & {r["paper_id"] for r in papers["results"]}
    every = client.get("/api/papers/fr-parse/related?k=60&include_non_papers=true").json()
    assert every["left_out"] == {} and {r["paper_id"] for r in every["results"]} >= NON_PAPERS
    assert len(every["results"]) == len(papers["results"]) + sum(LEFT_OUT.values())
    search = client.get("/api/search?q=Errata+Adendo&k=60").json()
    assert not NON_PAPERS & {r["paper_id"] for r in search["results"]}
    bad = client.get("/api/papers/fr-parse/related?include_non_papers=maybe")
    assert bad.status_code == 422 and "include_non_papers" in bad.text


def test_page_says_what_it_left_out_and_links_to_them(client) -> None:
    page = html.fromstring(client.get("/papers/fr-parse?k=60").text)
    line, = page.xpath("//p[@class='left-out']")
    assert line.text_content().startswith(
        "5 records that are not papers left out (2 editorials, 2 errata, 1 book review)")
    link = line.xpath(".//a/@href")[0]
    assert parse_qs(urlsplit(link).query) == {"k": ["60"], "include_non_papers": ["true"]}
    shown = html.fromstring(client.get(link).text)
    assert not shown.xpath("//p[@class='left-out']")
    titles = {a.get("href").split("/papers/", 1)[1].replace("%2F", "/")
              for a in shown.xpath("//a[@class='title']")}
    assert titles >= NON_PAPERS
