"""The demo corpus in a real browser (headless Chromium via Playwright, as test_browser.py):
what a newcomer sees after 'openmsd demo' and 'openmsd serve demo-corpus'."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from openmsd.demo import RELATED
from tests.server.conftest import BROWSER, CHROMIUM, serve_in_thread

pytestmark = BROWSER


@pytest.fixture(scope="module")
def demo_url(demo_run) -> Iterator[str]:
    from openmsd.server import create_app

    with serve_in_thread(create_app(demo_run[0], ["muse-v3"], watch_s=0)) as url:
        yield url


@pytest.fixture(scope="module")
def page(demo_url) -> Iterator:
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox"] if os.geteuid() == 0 else [])
        opened = browser.new_page(base_url=demo_url, viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        opened.on("pageerror", lambda error: errors.append(str(error)))
        yield opened
        browser.close()
        assert not errors, errors


def test_a_portuguese_search_finds_papers_in_several_languages(page, tmp_path) -> None:
    page.goto("/")
    page.fill("#q", "florestas secundárias e briófitas do Brasil")
    page.press("#q", "Enter")
    page.wait_for_selector("ol.results li.result")
    languages = {b.lower() for b in page.locator("li.result .badge.lang").all_inner_texts()}
    assert {"pt", "en"} <= languages
    facets = page.locator("#filters input[name=lang]")
    assert {"pt", "es", "en"} <= {facets.nth(i).get_attribute("value")
                                  for i in range(facets.count())}
    page.screenshot(path=tmp_path / "search.png")
    assert (tmp_path / "search.png").stat().st_size > 10_000


def test_a_papers_page_lists_related_papers_in_other_languages(page) -> None:
    page.goto(f"/papers/{RELATED[0][0]}")
    page.wait_for_selector("ol.results li.result")
    assert "Campylocentrum" in page.locator("h1, h2").first.inner_text()
    languages = {b.lower() for b in page.locator("li.result .badge.lang").all_inner_texts()}
    assert languages - {"pt"}, "no related paper in another language"


def test_the_home_page_offers_an_example_and_results_show_their_abstract(page, tmp_path
                                                                       ) -> None:
    page.goto("/")
    examples = page.locator("p.examples a.example")
    assert examples.count() == 2
    with page.expect_navigation():
        examples.first.click()
    page.wait_for_selector("ol.results li.result")
    snippets = page.locator("li.result p.snippet").all_inner_texts()
    assert len(snippets) >= 5 and all(0 < len(s) <= 240 for s in snippets)
    page.screenshot(path=tmp_path / "example.png", full_page=True)


def test_recommend_says_once_how_to_read_which_sentence_points_to_a_paper(page) -> None:
    from openmsd.demo import PARAGRAPH

    page.goto("/recommend")
    page.fill("#text", PARAGRAPH.read_text(encoding="utf-8"))
    with page.expect_navigation():
        page.click("#recommend")
    text = page.locator("section.locations").inner_text()
    assert "driven by" not in text
    assert page.locator("p.drivers-note").count() == 1
    said = page.locator("div.drivers").all_inner_texts()
    assert said and all(s.startswith("pointed to most by ") for s in said)
