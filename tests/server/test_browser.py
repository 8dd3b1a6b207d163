"""The page in a real browser: headless Chromium from Debian driven by Playwright, against the
app served by uvicorn on loopback. Skipped where /usr/bin/chromium is absent (CI installs it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.conftest import BROWSER

pytestmark = BROWSER



@pytest.fixture
def page(browser, server_url: str) -> Iterator:
    context = browser.new_context(base_url=server_url, accept_downloads=True)
    opened = context.new_page()
    dialogs: list[str] = []
    opened.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.dialogs, opened.errors = dialogs, errors
    yield opened
    context.close()
    assert not errors, errors


def test_search_filter_open_and_export(page) -> None:
    page.goto("/")
    page.fill("#q", "analyse syntaxique en dépendances")
    page.press("#q", "Enter")
    page.wait_for_selector("ol.results li.result")
    titles = page.locator("li.result a.title").all_inner_texts()
    assert titles[0] == "Analyse syntaxique en dépendances du français"
    languages = set(page.locator("li.result .badge.lang").all_inner_texts())
    assert {"FR", "ES", "PT"} <= {lang.upper() for lang in languages}

    # the language filter applies on change (app.js) and is rendered on the server
    with page.expect_navigation():
        page.check("#filters input[name=lang][value=es]")
    assert "lang=es" in page.url
    badges = page.locator("li.result .badge.lang").all_inner_texts()
    assert badges and {b.lower() for b in badges} == {"es"}
    assert page.locator("figure.chart text.chart-label").all_text_contents() == ["es"]

    # open a paper: its page lists its related papers, with why
    page.click("li.result a.title >> nth=0")
    page.wait_for_selector("article.paper h1")
    title = "Análisis sintáctico de dependencias para el español"
    assert page.inner_text("article.paper h1") == title
    assert page.locator("li.result").count() > 0
    assert "cited by the query paper" in page.inner_text("ol.results")

    # BibTeX of the selected results: shown and downloaded
    page.check("li.result input.pick >> nth=0")
    page.check("li.result input.pick >> nth=1")
    with page.expect_download() as download:
        page.click("#export-bibtex")
    text = Path(download.value.path()).read_text(encoding="utf-8")
    assert text.count("@article{") == 2
    assert page.inner_text("#bibtex-out").count("@article{") == 2


def test_script_in_a_title_stays_text(page) -> None:
    page.goto("/?q=dependency+parsing+markup")
    page.wait_for_selector("ol.results li.result")
    assert "<script>alert(1)</script>" in page.locator("li.result a.title").all_inner_texts()
    page.goto("/papers/xss")
    assert page.inner_text("article.paper h1") == "<script>alert(1)</script>"
    assert "<img src=x onerror=alert(2)>" in page.inner_text("article.paper .abstract")
    assert page.dialogs == []


def test_recommend_view(page) -> None:
    page.goto("/recommend")
    page.fill("#text", "Neural networks changed translation. Attention lets the model align "
              "source and target words (Bahdanau et al., 2015). We thank the reviewers.")
    with page.expect_navigation():
        page.click("#recommend")
    locations = page.locator("div.location")
    assert locations.count() == 1
    assert "Bahdanau et al., 2015" in locations.first.locator("mark").inner_text()
    assert "Neural machine translation" in locations.first.inner_text()


def test_related_to_a_library_view_and_export(page) -> None:
    # pick two papers in the results, ask for what is related to both
    page.goto("/?q=analyse+syntaxique+en+d%C3%A9pendances")
    page.wait_for_selector("ol.results li.result")
    page.check("li.result input.pick >> nth=0")
    page.check("li.result input.pick >> nth=1")
    with page.expect_navigation():
        page.click("#related-selected")
    assert "/library?id=" in page.url
    assert page.inner_text("h1") == "Related to these 2 papers"
    assert page.locator("ul.seeds li.seed").count() == 2
    results = page.locator("li.result")
    assert results.count() > 0
    assert "near " in page.inner_text("ol.results")  # which seeds put each result there
    # the library's results exported as RIS
    page.check("li.result input.pick >> nth=0")
    page.select_option("#export-format", "ris")
    with page.expect_download() as download:
        page.click("#export-bibtex")
    assert download.value.suggested_filename == "openmsd.ris"
    assert Path(download.value.path()).read_text(encoding="utf-8").startswith("TY  - JOUR")
    # a title with markup among the seeds stays text
    page.goto("/library?id=xss&id=en-parse")
    assert "<script>alert(1)</script>" in page.inner_text("ul.seeds")
    assert page.dialogs == []
