"""The neighbourhood picture in a real browser (headless Chromium): screenshots of the paper
page's picture at 1280 px and 390 px wide, its hover text, a click that opens a paper, and a
narrow page that scrolls the picture instead of the page."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.server.conftest import BROWSER

pytestmark = BROWSER



@pytest.mark.parametrize("width", [1280, 390])
def test_paper_page_picture(browser, server_url: str, tmp_path: Path, width: int) -> None:
    context = browser.new_context(base_url=server_url, viewport={"width": width, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if "Refused" in m.text else None)
    page.goto("/papers/fr-parse")
    figure = page.locator("#graph")
    figure.scroll_into_view_if_needed()
    page.wait_for_load_state("load")
    shot = tmp_path / f"graph-{width}.png"
    figure.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    box = page.locator("#graph svg").bounding_box()
    assert box is not None and box["width"] >= 700  # legible: never shrunk below 700 px
    # the page itself does not scroll sideways: the picture does, inside its frame
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
    query = page.locator("#graph circle.query").bounding_box()
    assert query is not None and 0 <= query["x"] <= width  # scrolled into view (app.js)
    labels = page.locator("#graph g.labels text")
    assert labels.count() >= 8
    hover = page.locator("#graph g.nodes a[data-paper='pt-parse'] > title").text_content()
    assert hover and "Análise sintática" in hover and "why:" in hover
    with page.expect_navigation():
        page.locator("#graph g.nodes a[data-paper='en-parse'] circle").click(force=True)
    assert page.url.endswith("/papers/en-parse")
    assert not errors, errors  # no CSP violation, no script error
    context.close()
