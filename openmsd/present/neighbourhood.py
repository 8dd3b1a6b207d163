"""A paper's neighbourhood as a graph: the query paper(s) and their related papers as nodes,
citations among them (and optionally strong similarity) as edges.

Each node carries what a picture shows of it: a short title, its language and year, how often
the corpus cites it, its score and why it is related. The pairwise similarities of the nodes
(cosines of their dense vectors; for a pair without vectors, the result's score when one of
the two is a query) are what :mod:`openmsd.present.picture` lays the graph out by.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from openmsd.corpus import Corpus
from openmsd.index import VectorIndex
from openmsd.present.view import shorten
from openmsd.search import SUMMARY, load_citation_graph, load_paper_records

__all__ = ["LABEL_WIDTH", "STRONG_SIMILARITY", "Edge", "Neighbourhood", "Node",
           "build_neighbourhood"]

LABEL_WIDTH = 44
"""Characters of a node's label (its title, cut at a word)."""
STRONG_SIMILARITY = 0.85
"""The cosine at or above which ``--similar-edges`` draws an edge between two results."""


@dataclass
class Node:
    """A paper of the picture."""

    paper_id: str
    title: str
    label: str
    language: str
    year: int | None
    citations: int  # corpus papers citing it
    score: float | None  # None for a query paper
    why: list[str] = field(default_factory=list)
    doi: str | None = None
    query: bool = False


@dataclass(frozen=True)
class Edge:
    """``source`` cites ``target`` (``kind`` "cites"), or the two are similar ("similar")."""

    source: int
    target: int
    kind: str
    weight: float = 1.0


@dataclass
class Neighbourhood:
    """Nodes (queries first), edges and the nodes' pairwise similarity (NaN: unknown)."""

    nodes: list[Node]
    edges: list[Edge]
    similarity: np.ndarray


def _field(result: Any, name: str) -> Any:
    return result.get(name) if isinstance(result, dict) else getattr(result, name, None)


def _vectors(index: VectorIndex | None, ids: list[str]) -> np.ndarray | None:
    """Unit vectors of ``ids`` (a row of NaN for a paper without one); None without index."""
    if index is None:
        return None
    rows = []
    for paper_id in ids:
        row = index.rows.get(paper_id)
        rows.append(index.vector(row) if row is not None
                    else np.full(index.index.d, np.nan, np.float32))
    vectors = np.asarray(rows, np.float32).reshape(len(ids), index.index.d)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def build_neighbourhood(corpus: Corpus, query_ids: Sequence[str], results: Sequence[Any],
                  index: VectorIndex | None = None, similar_edges: float | None = None
                  ) -> Neighbourhood:
    """The graph of ``query_ids`` (corpus paper ids) and their ``results``
    (:class:`~openmsd.search.related.Result` or its dict); ``index``: the dense index whose
    vectors give the pairwise similarities; ``similar_edges``: also an edge between two papers
    at or above this cosine."""
    query_ids = list(dict.fromkeys(query_ids))
    records = load_paper_records(corpus).get(query_ids, ["paper_id", *SUMMARY])
    nodes = [_node(record["paper_id"], record, None, [], True) for record in records]
    query_ids = [node.paper_id for node in nodes]  # the known ones
    graph = load_citation_graph(corpus)
    seen = set(query_ids)
    for result in results:
        paper_id = _field(result, "paper_id")
        if paper_id in seen:
            continue
        seen.add(paper_id)
        nodes.append(_node(paper_id, {name: _field(result, name) for name in SUMMARY},
                           _field(result, "score"), list(_field(result, "why") or []), False))
    ids = [n.paper_id for n in nodes]
    for node in nodes:
        node.citations = graph.citer_count(node.paper_id)
    position = {paper_id: i for i, paper_id in enumerate(ids)}
    number = {graph.nodes[p]: i for i, p in enumerate(ids) if p in graph.nodes}
    edges = [Edge(i, number[int(cited)], "cites") for i, p in enumerate(ids)
             for cited in dict.fromkeys(graph.references(p).tolist())
             if int(cited) in number and number[int(cited)] != i]
    vectors = _vectors(index, ids)
    n = len(nodes)
    similarity = (vectors @ vectors.T if vectors is not None
                  else np.full((n, n), np.nan, np.float32)).astype(np.float64)
    for node in nodes:  # a result's score stands for its similarity to a lone query
        if node.score is not None and len(query_ids) == 1:
            i = position[node.paper_id]
            if np.isnan(similarity[0, i]):
                similarity[0, i] = similarity[i, 0] = node.score
    np.fill_diagonal(similarity, 1.0)
    if similar_edges is not None:
        cited = {(e.source, e.target) for e in edges} | {(e.target, e.source) for e in edges}
        edges += [Edge(i, j, "similar", float(similarity[i, j]))
                  for i in range(n) for j in range(i + 1, n)
                  if similarity[i, j] >= similar_edges and (i, j) not in cited]
    return Neighbourhood(nodes, edges, similarity)


def _node(paper_id: str, record: dict[str, Any], score: float | None, why: list[str],
          query: bool) -> Node:
    title = record.get("title") or record.get("english_title") or paper_id
    return Node(paper_id=paper_id, title=" ".join(str(title).split()),
                label=shorten(str(title), LABEL_WIDTH), language=record.get("language") or "und",
                year=record.get("year"), citations=0,
                score=None if score is None else float(score), why=why, doi=record.get("doi"),
                query=query)
