"""A neighbourhood (:mod:`openmsd.present.neighbourhood`) drawn: laid out by similarity (a
force layout, networkx's Fruchterman-Reingold over the pairwise similarities, seeded) or on a
time axis (``by="year"``), coloured by language with a legend, sized by citations in the
corpus, with arrows for citations and dashed lines for strong similarity.

:func:`svg` writes the picture as SVG with lxml (every title is XML text, escaped by the
serializer; no script, no style element: presentation attributes only, so a page's content
security policy holds). Each node carries a ``<title>`` (its title, language, year, citations
and why: the hover text) and, when ``link`` gives one, a link. :func:`save` writes SVG or PNG
(matplotlib, same layout). Labels are placed greedily (queries first, then by score) at the
first of four spots beside the node that overlaps no other label or node; a label with no
free spot is shortened, then left to the hover text, so labels never pile up.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from lxml import etree

from openmsd.io import atomic_path
from openmsd.present.neighbourhood import Neighbourhood, Node
from openmsd.present.view import shorten
from openmsd.present.xml_text import xml_text

__all__ = ["FORMATS", "LANGUAGE_COLOURS", "LAYOUTS", "Label", "Picture", "draw", "hover", "save",
           "svg", "text_width"]

FORMATS = (".svg", ".png")
LAYOUTS = ("similarity", "year")
WIDTH, HEIGHT = 1000, 700
FONT = 11  # px
CHAR = 0.56 * FONT  # mean width of a character
LINE = FONT + 3
TOP, BOTTOM, SIDE = 64, 40, 16
LANGUAGE_COLOURS = {"en": "#1f77b4", "es": "#ff7f0e", "pt": "#2ca02c", "fr": "#d62728",
                    "de": "#9467bd", "it": "#8c564b", "ru": "#e377c2", "zh": "#17becf",
                    "ja": "#bcbd22", "und": "#7f7f7f"}
"""Each common language's colour (matplotlib's tab10), the same in every picture."""
EXTRA = ["#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d",
         "#31a354", "#756bb1", "#636363"]
OTHER = "#c7c7c7"
SVG_NS = "http://www.w3.org/2000/svg"
SHORTER = (32, 24)
"""The shorter labels a node tries (characters, cut at a word) where its full one finds no
free spot; below that, the hover text alone."""


@dataclass(frozen=True)
class Label:
    """A node's label: its text and box (top-left corner, width, height)."""

    text: str
    x: float
    y: float
    width: float


@dataclass
class Picture:
    """A laid-out neighbourhood: each node's centre and radius, its label (None: hover only),
    each language's colour, the canvas and the year axis (``by="year"``)."""

    hood: Neighbourhood
    x: np.ndarray
    y: np.ndarray
    radius: np.ndarray
    labels: list[Label | None]
    colours: dict[str, str]
    width: int
    height: int
    years: tuple[int, int] | None = None
    year_share: tuple[tuple[int, ...], tuple[float, ...]] = ((), ())
    """The time axis: each year of the papers and where it stands, from 0 to 1 (its share of
    the papers before it, :func:`year_shares`)."""

    def year_x(self, year: float) -> float:
        """The x of ``year`` on the time axis: by the share of papers before it, so that one
        paper decades older than the rest does not squeeze them into a corner."""
        known, shares = self.year_share
        if not known:
            low, high = self.years or (0, 1)
            share = (year - low) / max(high - low, 1)
        else:
            share = float(np.interp(year, known, shares))
        return SIDE + 40 + (self.width - 2 * SIDE - 220) * share


def year_shares(years: list[int]) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """Each distinct year of ``years`` and its place on a quantile axis, from 0 to 1: the share
    of the papers before it plus half of its own, rescaled so the first year is at 0 and the
    last at 1.

    >>> year_shares([1956, 2020, 2020, 2021, 2022])
    ((1956, 2020, 2021, 2022), (0.0, 0.375, 0.75, 1.0))
    """
    known = sorted(set(years))
    if len(known) < 2:
        return tuple(known), tuple(0.5 for _ in known)
    counts = [years.count(year) for year in known]
    before = np.cumsum([0, *counts[:-1]])
    middle = before + np.array(counts) / 2
    shares = (middle - middle[0]) / (middle[-1] - middle[0])
    return tuple(known), tuple(round(float(v), 4) for v in shares)


def _ticks(picture: Picture) -> list[int]:
    """The years the axis labels: the first, the last and those between them at least 40 px
    from a labelled one."""
    known = list(picture.year_share[0])
    if not known and picture.years is not None:
        low, high = picture.years
        known = list(range(low, high + 1, max(1, math.ceil((high - low) / 10))))
    ticks: list[int] = []
    for year in known:
        if not ticks or picture.year_x(year) - picture.year_x(ticks[-1]) >= 40:
            ticks.append(year)
    if known and ticks[-1] != known[-1]:
        if len(ticks) > 1 and picture.year_x(known[-1]) - picture.year_x(ticks[-1]) < 40:
            ticks.pop()
        ticks.append(known[-1])
    return ticks


def _colours(nodes: list[Node]) -> dict[str, str]:
    """A colour per language, the same in every picture (a fixed one for the common
    languages, else one of :data:`EXTRA` by a digest of the code), the most frequent first."""
    counts: dict[str, int] = {}
    for node in nodes:
        counts[node.language] = counts.get(node.language, 0) + 1
    ordered = sorted(counts, key=lambda g: (g == "und", -counts[g], g))
    return {lang: LANGUAGE_COLOURS.get(lang)
            or EXTRA[zlib.crc32(lang.encode()) % len(EXTRA)] for lang in ordered}


def _force(hood: Neighbourhood, seed: int) -> np.ndarray:
    """Fruchterman-Reingold positions (n x 2, in [-1, 1]) over the similarities: a pair
    pulls harder the more similar it is; citations pull too."""
    import networkx as nx  # lazy: networkx takes ~0.2 s to import

    n = len(hood.nodes)
    if n == 1:
        return np.zeros((1, 2))
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    sim = np.nan_to_num(hood.similarity, nan=0.0)
    low = np.percentile(sim[np.triu_indices(n, 1)], 50) if n > 2 else 0.0
    for i in range(n):
        for j in range(i + 1, n):
            weight = max(sim[i, j] - low, 0.0) ** 2
            if weight > 0:
                graph.add_edge(i, j, weight=weight)
    for edge in hood.edges:
        if edge.kind == "cites":
            old = graph.get_edge_data(edge.source, edge.target, {"weight": 0.0})["weight"]
            graph.add_edge(edge.source, edge.target, weight=old + 0.02)
    for i in range(n):  # a paper with nothing known stays near the query
        if graph.degree(i) == 0 and i != 0:
            graph.add_edge(0, i, weight=0.01)
    found = nx.spring_layout(graph, weight="weight", seed=seed, iterations=300,
                             k=1.6 / math.sqrt(n))
    return np.array([found[i] for i in range(n)], float)


def _fit(values: np.ndarray, low: float, high: float) -> np.ndarray:
    """``values`` scaled onto ``[low, high]``, their 5th to 95th percentiles spanning it (an
    outlier sits at the border instead of squeezing the rest together)."""
    bottom, top = (np.percentile(values, [5, 95]) if len(values) > 10
                   else (values.min(), values.max()))
    if top - bottom <= 0:
        return np.full(len(values), (low + high) / 2)
    return np.clip(low + (values - bottom) * (high - low) / (top - bottom), low, high)


def text_width(text: str) -> float:
    """The width of ``text`` in pixels at the label font, about (capitals and wide letters
    count more)."""
    wide = sum(1 for c in text if c.isupper() or c in "mwMW@%" or ord(c) > 0x2e80)
    return (len(text) - wide) * CHAR + wide * 1.3 * CHAR + 2


def _spread(x: np.ndarray, y: np.ndarray, radius: np.ndarray, box: tuple[float, ...],
            move_x: bool, rounds: int = 300) -> None:
    """Push apart nodes closer than their radii plus a label's height (in place): each round
    moves both nodes of every such pair half the missing distance apart (only up and down
    when ``move_x`` is false: a time axis keeps its x)."""
    left, top, right, bottom = box
    gap = radius[:, None] + radius[None, :] + LINE + 4
    upper = np.triu(np.ones((len(x), len(x)), bool), 1)
    for _ in range(rounds):
        dx, dy = x[None, :] - x[:, None], y[None, :] - y[:, None]
        dist = np.hypot(dx, dy)
        close = upper & (dist < gap)
        if not close.any():
            return
        same = dist < 1e-6  # one on top of the other: apart along a fixed direction
        dx, dy = np.where(same, 1.0 if move_x else 0.0, dx), np.where(same, 1.0, dy)
        dist = np.where(same, 1.0, dist)
        push = np.where(close, (gap - dist) / 2, 0.0)
        if move_x:
            ux, uy = dx / dist, dy / dist
        else:
            ux, uy = np.zeros_like(dx), np.where(dy >= 0, 1.0, -1.0)
        x += (ux * push).sum(axis=0) - (ux * push).sum(axis=1)
        y += (uy * push).sum(axis=0) - (uy * push).sum(axis=1)
        np.clip(x, left, right, out=x)
        np.clip(y, top, bottom, out=y)


def _overlaps(a: tuple[float, float, float, float], b: tuple[float, float, float, float]
              ) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _place_labels(nodes: list[Node], x: np.ndarray, y: np.ndarray, radius: np.ndarray,
                  width: int, height: int) -> list[Label | None]:
    """A label per node at the first free spot (right, left, below, above), queries first,
    then by score; shortened, then none, where no spot is free."""
    circles = [(x[i] - radius[i], y[i] - radius[i], x[i] + radius[i], y[i] + radius[i])
               for i in range(len(nodes))]
    taken: list[tuple[float, float, float, float]] = []
    labels: list[Label | None] = [None] * len(nodes)
    order = sorted(range(len(nodes)), key=lambda i: (not nodes[i].query,
                                                     -(nodes[i].score or 0.0), i))
    for i in order:
        for text in dict.fromkeys([nodes[i].label, *(shorten(nodes[i].label, width)
                                                      for width in SHORTER)]):
            w = text_width(text)
            spots = [(x[i] + radius[i] + 3, y[i] - LINE / 2),
                     (x[i] - radius[i] - 3 - w, y[i] - LINE / 2),
                     (x[i] - w / 2, y[i] + radius[i] + 1),
                     (x[i] - w / 2, y[i] - radius[i] - 1 - LINE)]
            for left, top in spots:
                box = (left, top, left + w, top + LINE)
                if (left < 2 or top < TOP - 6 or box[2] > width - 2 or box[3] > height - 4
                        or any(_overlaps(box, t) for t in taken)
                        or any(_overlaps(box, c) for j, c in enumerate(circles) if j != i)):
                    continue
                labels[i] = Label(text, left, top, w)
                taken.append(box)
                break
            if labels[i] is not None:
                break
    return labels


def draw(hood: Neighbourhood, by: str = "similarity", seed: int = 0) -> Picture:
    """``hood`` laid out ``by`` similarity (a force layout) or year (x: the year, y: the
    force layout's), deterministic for a ``seed``."""
    if by not in LAYOUTS:
        raise ValueError(f"--by {by!r}: expected one of {', '.join(LAYOUTS)}")
    n = len(hood.nodes)
    width = WIDTH
    height = max(HEIGHT, int(HEIGHT * math.sqrt(n / 40))) if n > 40 else HEIGHT
    citations = np.array([node.citations for node in hood.nodes], float)
    top_cited = citations.max() if n and citations.max() > 0 else 1.0
    radius = 4.0 + 10.0 * np.sqrt(citations / top_cited)
    position = _force(hood, seed) if n else np.zeros((0, 2))
    area = (SIDE + 20, TOP + 14, width - SIDE - 200, height - BOTTOM - 14)
    years = None
    if by == "year":
        known = [node.year for node in hood.nodes if node.year is not None]
        years = (min(known), max(known)) if known else (0, 1)
        shares = year_shares(known)
        picture = Picture(hood, np.zeros(n), np.zeros(n), radius, [], {}, width, height, years,
                          shares)
        x = np.array([picture.year_x(node.year) if node.year is not None else SIDE + 12
                      for node in hood.nodes], float)
        y = _fit(position[:, 1], area[1], area[3]) if n else np.zeros(0)
        _spread(x, y, radius, (SIDE + 8, area[1], width - SIDE - 200, area[3]), False)
    else:
        x = _fit(position[:, 0], area[0], area[2]) if n else np.zeros(0)
        y = _fit(position[:, 1], area[1], area[3]) if n else np.zeros(0)
        _spread(x, y, radius, area, True)
        shares = ((), ())
    labels = _place_labels(hood.nodes, x, y, radius, width, height)
    return Picture(hood, x, y, radius, labels, _colours(hood.nodes), width, height, years,
                   shares)


def hover(node: Node) -> str:
    """A node's hover text: title, language, year, citations, score and why."""
    parts = [node.title, f"{node.language} · {node.year or 'year unknown'} · cited by "
             f"{node.citations} in the corpus"]
    if node.query:
        parts.append("the query paper")
    else:
        parts.append(f"score {node.score:.3f}" if node.score is not None else "")
    if node.why:
        parts.append("why: " + "; ".join(node.why))
    return "\n".join(xml_text(p) for p in parts if p)


def _el(parent: etree._Element, tag: str, text: str | None = None, **attrs: object
        ) -> etree._Element:
    element = etree.SubElement(parent, f"{{{SVG_NS}}}{tag}",
                               {k.rstrip("_").replace("_", "-"): str(v) for k, v in attrs.items()})
    if text is not None:
        element.text = xml_text(text)
    return element


def _edge_ends(picture: Picture, i: int, j: int) -> tuple[float, float, float, float]:
    """A line between nodes ``i`` and ``j``, from circle edge to circle edge."""
    x1, y1, x2, y2 = picture.x[i], picture.y[i], picture.x[j], picture.y[j]
    dist = math.hypot(x2 - x1, y2 - y1) or 1.0
    ux, uy = (x2 - x1) / dist, (y2 - y1) / dist
    return (x1 + ux * picture.radius[i], y1 + uy * picture.radius[i],
            x2 - ux * (picture.radius[j] + 2), y2 - uy * (picture.radius[j] + 2))


def _legend_items(picture: Picture) -> list[tuple[str, str, int]]:
    counts: dict[str, int] = {}
    for node in picture.hood.nodes:
        counts[node.language] = counts.get(node.language, 0) + 1
    return [(lang, colour, counts[lang]) for lang, colour in picture.colours.items()]


def svg(picture: Picture, link: Callable[[Node], str | None] | None = None,
        caption: str | None = None) -> str:
    """The picture as a standalone SVG document (a string); ``link(node)``: where a click on
    a node goes (None: nowhere)."""
    root = etree.Element(f"{{{SVG_NS}}}svg", nsmap={None: SVG_NS}, attrib={
        "viewBox": f"0 0 {picture.width} {picture.height}", "width": str(picture.width),
        "height": str(picture.height), "role": "img", "class": "neighbourhood",
        "font-family": "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
        "font-size": str(FONT)})
    queries = [node for node in picture.hood.nodes if node.query]
    _el(root, "title", caption or ("Related papers of " + "; ".join(q.title for q in queries[:3])
                                   + (" …" if len(queries) > 3 else "")))
    _el(root, "rect", x=0, y=0, width=picture.width, height=picture.height, fill="#ffffff")
    defs = _el(root, "defs")
    marker = _el(defs, "marker", id="arrow", viewBox="0 0 10 10", refX=9, refY=5,
                 markerWidth=6, markerHeight=6, orient="auto-start-reverse")
    _el(marker, "path", d="M 0 0 L 10 5 L 0 10 z", fill="#777777")
    _legend(root, picture)
    if picture.years is not None:
        _axis(root, picture)
    edges = _el(root, "g", class_="edges")
    for edge in picture.hood.edges:
        x1, y1, x2, y2 = _edge_ends(picture, edge.source, edge.target)
        if edge.kind == "cites":
            _el(edges, "line", x1=f"{x1:.1f}", y1=f"{y1:.1f}", x2=f"{x2:.1f}", y2=f"{y2:.1f}",
                stroke="#888888", stroke_width=1, marker_end="url(#arrow)")
        else:
            _el(edges, "line", x1=f"{x1:.1f}", y1=f"{y1:.1f}", x2=f"{x2:.1f}", y2=f"{y2:.1f}",
                stroke="#b0b0b0", stroke_width=1, stroke_dasharray="4 3")
    nodes = _el(root, "g", class_="nodes")
    labels = _el(root, "g", class_="labels")
    for i, node in enumerate(picture.hood.nodes):
        target = link(node) if link else None
        colour = picture.colours.get(node.language, OTHER)
        for group, draw_label in ((nodes, False), (labels, True)):
            label = picture.labels[i]
            if draw_label and label is None:
                continue
            holder = (_el(group, "a", href=target, class_="node") if target
                      else _el(group, "g", class_="node"))
            holder.set("data-paper", xml_text(node.paper_id))
            _el(holder, "title", hover(node))
            if draw_label:
                assert label is not None
                _el(holder, "text", label.text, x=f"{label.x + 1:.1f}",
                    y=f"{label.y + FONT:.1f}", fill="#1a1a1a", stroke="#ffffff",
                    stroke_width=3, paint_order="stroke",
                    font_weight="bold" if node.query else "normal")
            else:
                _el(holder, "circle", cx=f"{picture.x[i]:.1f}", cy=f"{picture.y[i]:.1f}",
                    r=f"{picture.radius[i]:.1f}", fill=colour,
                    stroke="#000000" if node.query else "#ffffff",
                    stroke_width=3 if node.query else 1, class_="query" if node.query else "paper")
    return etree.tostring(root, encoding="unicode")


def _legend(root: etree._Element, picture: Picture) -> None:
    legend = _el(root, "g", class_="legend")
    x = SIDE
    for lang, colour, count in _legend_items(picture):
        _el(legend, "circle", cx=x + 6, cy=18, r=6, fill=colour)
        text = f"{lang} ({count})"
        _el(legend, "text", text, x=x + 16, y=22, fill="#1a1a1a")
        x += 26 + text_width(text)
    top_cited = max((node.citations for node in picture.hood.nodes), default=0)
    notes = [f"size: citations in the corpus (most: {top_cited})",
             "→ cites", "thick ring: query paper"]
    if any(e.kind == "similar" for e in picture.hood.edges):
        notes.append("dashed: similar")
    if picture.years is None:
        notes.append("close together: similar")
    if not any(e.kind == "cites" for e in picture.hood.edges):
        notes[1] = "no citation between these papers in the corpus"
    _el(legend, "text", " · ".join(notes), x=SIDE, y=44, fill="#555555")


def _axis(root: etree._Element, picture: Picture) -> None:
    assert picture.years is not None
    low, high = picture.years
    axis = _el(root, "g", class_="axis")
    base = picture.height - BOTTOM + 6
    _el(axis, "line", x1=picture.year_x(low), y1=base, x2=picture.year_x(high), y2=base,
        stroke="#999999")
    for year in _ticks(picture):
        xx = picture.year_x(year)
        _el(axis, "line", x1=xx, y1=TOP + 6, x2=xx, y2=base, stroke="#eeeeee")
        _el(axis, "text", str(year), x=xx, y=base + 16, fill="#555555", text_anchor="middle")
    if any(node.year is None for node in picture.hood.nodes):
        _el(axis, "text", "n.d.", x=SIDE + 12, y=base + 16, fill="#555555",
            text_anchor="middle")


def _png(picture: Picture, target: Path, scale: float = 1.5) -> None:
    """The picture drawn with matplotlib (the SVG's layout, colours and labels) as PNG."""
    # optional: the eval extra; matplotlib takes ~0.5 s to import
    from matplotlib.figure import Figure
    from matplotlib.patches import Circle, FancyArrowPatch

    fig = Figure(figsize=(picture.width / 100, picture.height / 100), dpi=100 * scale)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, picture.width)
    ax.set_ylim(picture.height, 0)
    ax.axis("off")
    pt = 0.72  # points per pixel at 100 dpi
    font = {"fontsize": FONT * pt, "parse_math": False}
    x = SIDE
    for lang, colour, count in _legend_items(picture):
        ax.add_patch(Circle((x + 6, 18), 6, color=colour))
        text = f"{lang} ({count})"
        ax.text(x + 16, 22, text, va="baseline", **font)
        x += 26 + text_width(text)
    if picture.years is not None:
        low, high = picture.years
        base = picture.height - BOTTOM + 6
        ax.plot([picture.year_x(low), picture.year_x(high)], [base, base], color="#999999",
                lw=0.8)
        for year in _ticks(picture):
            xx = picture.year_x(year)
            ax.plot([xx, xx], [TOP + 6, base], color="#eeeeee", lw=0.8, zorder=0)
            ax.text(xx, base + 16, str(year), ha="center", color="#555555", **font)
    for edge in picture.hood.edges:
        x1, y1, x2, y2 = _edge_ends(picture, edge.source, edge.target)
        if edge.kind == "cites":
            ax.add_patch(FancyArrowPatch((x1, y1), (x2, y2), arrowstyle="-|>",
                                         mutation_scale=8, color="#888888", lw=0.8,
                                         shrinkA=0, shrinkB=0, zorder=1))
        else:
            ax.plot([x1, x2], [y1, y2], color="#b0b0b0", lw=0.8, ls="--", zorder=1)
    for i, node in enumerate(picture.hood.nodes):
        ax.add_patch(Circle((picture.x[i], picture.y[i]), picture.radius[i],
                            facecolor=picture.colours.get(node.language, OTHER),
                            edgecolor="#000000" if node.query else "#ffffff",
                            lw=2 if node.query else 0.7, zorder=2))
    # optional: the eval extra; matplotlib takes ~0.5 s to import
    import matplotlib.patheffects as effects

    halo = [effects.withStroke(linewidth=2.5, foreground="white")]
    for i, label in enumerate(picture.labels):
        if label is not None:
            ax.text(label.x + 1, label.y + FONT, label.text, va="baseline", zorder=3,
                    fontweight="bold" if picture.hood.nodes[i].query else "normal",
                    path_effects=halo, **font)
    fig.savefig(target, format="png", facecolor="white")


def save(picture: Picture, target: Path, link: Callable[[Node], str | None] | None = None
         ) -> None:
    """Write the picture to ``target`` (.svg or .png), atomically; ValueError for another
    extension, OSError when it cannot be written."""
    suffix = target.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"{target}: expected a .svg or .png file name, got "
                         f"{suffix or 'no extension'!r}")
    with atomic_path(target) as tmp:
        if suffix == ".svg":
            tmp.write_text('<?xml version="1.0" encoding="UTF-8"?>\n' + svg(picture, link),
                           encoding="utf-8")
        else:
            _png(picture, tmp)
