"""The picture of a neighbourhood without a corpus: nodes never on top of each other, labels
never overlapping, text XML cannot hold removed, a time axis that keeps the years' order."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from lxml import etree

from openmsd.present import LAYOUTS, Neighbourhood, draw, svg
from openmsd.present.neighbourhood import Edge, Node

SVG = "{http://www.w3.org/2000/svg}"


def _hood(n: int, same: bool = False) -> Neighbourhood:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(n, 8))
    if same:  # every paper equally similar: the layout alone cannot tell them apart
        vectors[:] = vectors[0]
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    nodes = [Node(f"p{i}", f"A rather long title number {i} about parsing",
                  f"A rather long title number {i}…", ["en", "fr", "pt", "es"][i % 4],
                  None if i == 3 else 1990 + i % 30, i % 7, None if i == 0 else 0.5,
                  ["similar text"], query=i == 0) for i in range(n)]
    nodes[5].title = "bad \x00 \x1b[31m title \ud800 <script>alert(1)</script>"
    nodes[5].label = nodes[5].title
    return Neighbourhood(nodes, [Edge(1, 0, "cites"), Edge(2, 1, "cites")], vectors @ vectors.T)


@pytest.mark.parametrize(("by", "same"), list(itertools.product(LAYOUTS, [False, True])))
def test_nodes_and_labels_never_overlap(by: str, same: bool) -> None:
    picture = draw(_hood(31, same), by)
    for i, j in itertools.combinations(range(31), 2):
        gap = np.hypot(picture.x[i] - picture.x[j], picture.y[i] - picture.y[j])
        assert gap >= picture.radius[i] + picture.radius[j] - 0.5, (i, j)
    boxes = [(lab.x, lab.y, lab.x + lab.width, lab.y + 14) for lab in picture.labels if lab]
    assert len(boxes) >= 25
    for a, b in itertools.combinations(boxes, 2):
        assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3])


def test_svg_is_xml_with_titles_as_text() -> None:
    picture = draw(_hood(12))
    document = svg(picture, lambda node: f"/papers/{node.paper_id}?a=1&b=<2>")
    root = etree.fromstring(document.encode())
    assert not list(root.iter(f"{SVG}script"))
    hovers = [t.text for t in root.iter(f"{SVG}title")]
    assert any("<script>alert(1)</script>" in (t or "") for t in hovers)
    assert all("\x00" not in (t or "") and "\x1b" not in (t or "") for t in hovers)
    assert {a.get("href") for a in root.iter(f"{SVG}a")} >= {"/papers/p1?a=1&b=<2>"}
    assert svg(draw(_hood(12))) == svg(draw(_hood(12)))  # seeded


def test_time_axis_orders_years() -> None:
    picture = draw(_hood(20), "year")
    years = {i: n.year for i, n in enumerate(picture.hood.nodes) if n.year is not None}
    for i, j in itertools.combinations(years, 2):
        if years[i] < years[j]:
            assert picture.x[i] < picture.x[j]
    assert picture.x[3] < min(picture.x[i] for i in years)  # year unknown: at the left
    with pytest.raises(ValueError, match="--by 'size'"):
        draw(_hood(8), "size")


def test_one_old_paper_does_not_squeeze_the_others_on_the_time_axis() -> None:
    hood = _hood(31)
    for i, node in enumerate(hood.nodes):
        node.year = 1956 if i == 7 else 2000 + i % 25
    picture = draw(hood, "year")
    recent = [picture.x[i] for i, node in enumerate(hood.nodes) if node.year >= 2000]
    axis = picture.year_x(2024) - picture.year_x(1956)
    assert (max(recent) - min(recent)) >= 0.8 * axis  # not crowded into the right fifth
    assert picture.x[7] < min(recent)  # the old paper still first
    ticks = [t.text for t in etree.fromstring(svg(picture).encode()).iter(f"{SVG}text")
             if (t.text or "").isdigit()]
    assert ticks[0] == "1956" and ticks[-1] == "2024" and len(ticks) >= 5


def test_a_picture_without_citations_says_so_and_labels_read() -> None:
    hood = _hood(12)
    hood.edges.clear()
    root = etree.fromstring(svg(draw(hood)).encode())
    texts = [t.text or "" for t in root.iter(f"{SVG}text")]
    assert any("no citation between these papers in the corpus" in t for t in texts)
    shown = [label.text for label in draw(_hood(12)).labels if label]
    assert all(len(text.split()) >= 4 for text in shown)  # more than a title's first words
