"""The neighbourhood picture of the paper page and the library page: the query paper(s) and
their related papers (the page's filters applied) drawn as inline SVG on the server
(:mod:`openmsd.present.picture`): no script, and the content security policy holds. A node's
``<title>`` is its hover text (title, language, year, citations, why); a click opens its
page."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from markupsafe import Markup

from openmsd.present import build_neighbourhood, draw, svg
from openmsd.server.resources import Resources

__all__ = ["GRAPH_K", "picture_of"]

GRAPH_K = 30
"""Related papers a page's picture shows."""


def picture_of(resources: Resources, query_ids: list[str], results: list[dict[str, Any]],
               model: str | None = None, by: str = "similarity") -> Markup:
    """The SVG of ``query_ids`` and ``results`` (result dicts), ready to inline in a page
    (lxml wrote it: every text in it is escaped)."""
    name = model if model in resources.models else resources.default_model
    hood = build_neighbourhood(resources.corpus, query_ids, results[:GRAPH_K],
                               resources.index(name))
    caption = f"{len(hood.nodes) - len(query_ids)} related papers, placed by {by}"
    return Markup(svg(draw(hood, by), lambda node: "/papers/" + quote(node.paper_id, safe=""),
                      caption))
