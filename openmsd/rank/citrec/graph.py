"""The rerank stage's citation-graph signals: what the reference lists of a corpus's citing
papers say about a candidate for one location.

Only the links a location may see count (``visible``, :func:`visible_citing`): never those of
its own paper (its labels), never those of a held-out citing paper, and in a time-ordered split
none of a paper newer than its own. Three signals, each a (queries × candidates) matrix that is
zero where the corpus has no links:

* ``popularity``: log(1 + the candidate's visible in-degree);
* ``neighbours``: "papers like this manuscript cite it": the sum, over the ``neighbours``
  visible citing papers most similar to the manuscript (a similarity matrix the caller gives,
  e.g. the model's whole-manuscript cosine), of their similarity where they cite the candidate;
* ``cocited``: graph pseudo-relevance feedback: how many visible papers cite the candidate
  together with one of the prefetch's top ``feedback`` candidates (their co-citations, summed).

>>> links = link_matrix({"p": {"a", "b"}, "q": {"a"}}, ["p", "q"], ["a", "b", "c"])
>>> visible = visible_citing(["p", "q"], ["x"])
>>> prefetch = np.array([[1.0, 3.0, 2.0]])
>>> signals = graph_signals(links, visible, prefetch, feedback=1)
>>> np.round(np.expm1(signals["popularity"]), 3).tolist(), signals["cocited"].tolist()
([[2.0, 1.0, 0.0]], [[1.0, 0.0, 0.0]])
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import numpy as np

from openmsd.rank.citrec.data import CitrecData, Location

__all__ = ["GRAPH_FEATURES", "cocitations", "cocited_set", "graph_rows", "graph_scores",
           "graph_signals", "link_matrix", "visible_citing"]

GRAPH_FEATURES = ("popularity", "neighbours", "cocited")
"""The signals :func:`graph_signals` gives."""
NEIGHBOURS = 10
"""How many visible citing papers most like the manuscript vote (``neighbours``)."""
FEEDBACK = 5
"""How many of the prefetch's best candidates the ``cocited`` feedback starts from."""


def link_matrix(reference_lists: Mapping[str, Collection[str]], citing: Sequence[str],
                candidates: Sequence[str]) -> np.ndarray:
    """(len(citing), len(candidates)) 1 where a citing paper's reference list holds a
    candidate, else 0 (references to non-candidates are left out)."""
    column = {p: j for j, p in enumerate(candidates)}
    links = np.zeros((len(citing), len(candidates)), np.float32)
    for i, paper in enumerate(citing):
        cols = [column[c] for c in reference_lists.get(paper, ()) if c in column]
        links[i, cols] = 1.0
    return links


def visible_citing(citing: Sequence[str], own: Sequence[str], hidden: Collection[str] = (),
                   keys: Mapping[str, Any] | None = None,
                   missing: Any = (-10**6, "")) -> np.ndarray:
    """(len(own), len(citing)) True where a location whose paper is ``own[i]`` may read the
    links of ``citing[j]``: not its own paper, not one of ``hidden`` (held-out citing papers)
    and, with ``keys`` (a time-ordered split: each paper's (year, …) key; ``missing`` for a
    paper without one, the oldest), not newer than its own paper.

    >>> visible_citing(["a", "b", "c"], ["b"], hidden={"c"}).tolist()
    [[True, False, False]]
    >>> visible_citing(["a", "b"], ["c"], keys={"a": (2001,), "b": (2003,), "c": (2002,)}).tolist()
    [[True, False]]
    """
    hidden = set(hidden)
    allowed = np.array([p not in hidden for p in citing], bool)
    out = np.repeat(allowed[None, :], len(own), axis=0)
    index = {p: j for j, p in enumerate(citing)}
    for i, paper in enumerate(own):
        if paper in index:
            out[i, index[paper]] = False
    if keys is not None:
        theirs = [keys.get(p, missing) for p in citing]
        for i, paper in enumerate(own):
            mine = keys.get(paper, missing)
            out[i] &= np.array([k <= mine for k in theirs], bool)
    return out


def graph_signals(links: np.ndarray, visible: np.ndarray, prefetch: np.ndarray,
                  similarity: np.ndarray | None = None, neighbours: int = NEIGHBOURS,
                  feedback: int = FEEDBACK) -> dict[str, np.ndarray]:
    """The signals of the module docstring for each query: ``links`` (citing × candidates,
    :func:`link_matrix`), ``visible`` (queries × citing, :func:`visible_citing`),
    ``prefetch`` (queries × candidates, −inf: not allowed), ``similarity`` (queries × citing:
    the manuscript's similarity to each citing paper; None: no ``neighbours`` signal, zeros)."""
    links = np.asarray(links, np.float64)
    seen = visible.astype(np.float64)
    indegree = seen @ links
    top = np.argsort(-prefetch, axis=1, kind="stable")[:, :feedback]
    allowed = np.isfinite(np.take_along_axis(prefetch, top, axis=1))
    # for each visible paper, how many of the query's feedback candidates it cites
    hits = np.stack([(links[:, t[a]]).sum(1) for t, a in zip(top, allowed, strict=True)]) \
        if len(top) else np.zeros((0, links.shape[0]))
    cocited = (seen * hits) @ links
    # a feedback candidate is not co-cited with itself
    for i, (t, a) in enumerate(zip(top, allowed, strict=True)):
        cocited[i, t[a]] -= indegree[i, t[a]]
    vote = np.zeros_like(indegree)
    if similarity is not None and links.shape[0]:
        weights = np.where(visible, np.nan_to_num(similarity, nan=-np.inf, neginf=-np.inf),
                           -np.inf)
        k = min(neighbours, weights.shape[1])
        nearest = np.argpartition(-weights, k - 1, axis=1)[:, :k]
        chosen = np.zeros_like(seen)
        values = np.take_along_axis(weights, nearest, axis=1)
        np.put_along_axis(chosen, nearest, np.where(np.isfinite(values), values, 0.0), axis=1)
        vote = chosen @ links
    return {"popularity": np.log1p(indegree), "neighbours": vote, "cocited": cocited}


def graph_scores(data: CitrecData, locations: list[Location], candidates: list[str],
                 prefetch: np.ndarray, manuscript: np.ndarray, hidden: set[str],
                 split: str) -> dict[str, np.ndarray]:
    """The rerank stage's citation-graph features (:func:`graph_signals`) of
    ``locations`` (queries × candidates) from ``data.reference_lists``: only the lists of
    citing papers other than a location's own, none of ``hidden`` (held-out citing papers)
    and, with ``split="time"``, none newer than its paper (``data.time_keys``); the
    ``neighbours`` are the citing papers most like the manuscript by ``manuscript`` (the
    whole-manuscript cosine with each candidate, queries × candidates), among those that are
    candidates. ``prefetch``: the locations' prefetch scores (the ``cocited`` feedback)."""
    citing = sorted(data.reference_lists)
    column = {p: i for i, p in enumerate(candidates)}
    pairs = [(j, column[p]) for j, p in enumerate(citing) if p in column]
    similarity = np.full((len(locations), len(citing)), -np.inf)
    if pairs:
        similarity[:, [j for j, _ in pairs]] = manuscript[:, [c for _, c in pairs]]
    visible = visible_citing(citing, [loc.citing_id for loc in locations], hidden,
                             data.time_keys if split == "time" else None)
    return graph_signals(link_matrix(data.reference_lists, citing, candidates), visible,
                         prefetch, similarity)


def graph_rows(graph: Any, ids: list[str], exclude: Collection[str],
               similarity: Callable[[list[str]], np.ndarray] | None = None
               ) -> dict[str, np.ndarray]:
    """The citation-graph features of one location's prefetched ``ids`` (in the prefetch's
    order) from a corpus's citation ``graph`` (``nodes``: paper id → node, ``citing(paper)``:
    the nodes citing it; None: no graph), the links of the papers of ``exclude`` (the
    manuscript itself) not read; zeros without a graph or links. ``similarity``: the
    manuscript's similarity to given citing papers (``neighbours``)."""
    if graph is None:
        return {f: np.zeros((1, len(ids))) for f in GRAPH_FEATURES}
    left_out = {graph.nodes[p] for p in exclude if p in graph.nodes}
    citing = [graph.citing(p) for p in ids]
    nodes = sorted({int(n) for found in citing for n in found} - left_out)
    row = {n: r for r, n in enumerate(nodes)}
    links = np.zeros((len(nodes), len(ids)), np.float32)
    for j, found in enumerate(citing):
        links[[row[int(n)] for n in found if int(n) in row], j] = 1.0
    names = list(graph.nodes) if similarity is not None and nodes else []
    return graph_signals(links, np.ones((1, len(nodes)), bool),
                         -np.arange(len(ids), dtype=np.float64)[None, :],
                         similarity([names[n] for n in nodes])[None, :]
                         if similarity is not None else None)


def cocitations(graph: Any, ids: list[str]) -> dict[str, dict[str, int]]:
    """For each of ``ids``, the others it is co-cited with in ``graph`` (``links(paper,
    others)``: each link's ``co_cited`` count) and how often."""
    out: dict[str, dict[str, int]] = {}
    for paper_id in ids:
        others = [p for p in ids if p != paper_id]
        counts = {p: link.co_cited for p, link in zip(others, graph.links(paper_id, others),
                                                      strict=True) if link.co_cited}
        if counts:
            out[paper_id] = counts
    return out


def cocited_set(ids: list[str], cocited: Mapping[str, Mapping[str, int]], n: int
                ) -> list[str]:
    """``n`` of the ranked ``ids`` to cite together: the best, then those most co-cited
    (:func:`cocitations`) with the chosen ones (ties and papers co-cited with none by rank).

    >>> cocited_set(["a", "b", "c"], {"a": {"c": 2}}, 2)
    ['a', 'c']
    """
    chosen = ids[:1]
    rest = ids[1:]
    while rest and len(chosen) < n:
        best = max(rest, key=lambda p: (sum(cocited.get(c, {}).get(p, 0) for c in chosen),
                                        -rest.index(p)))
        chosen.append(best)
        rest.remove(best)
    return chosen
