"""The rerank stage's citation-graph signals (:mod:`openmsd.rank.citrec.graph`), their
label-safe visibility, and the fusion's rule that they only raise a candidate."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from openmsd.rank import (
    NONNEGATIVE,
    CitrecData,
    Location,
    fit_fusion,
    graph_rows,
    graph_scores,
    graph_signals,
    link_matrix,
    visible_citing,
)
from openmsd.search.citation_graph import CitationGraph

REFERENCES = {"old": {"a", "b"}, "mid": {"a", "c"}, "new": {"a", "b", "c"}, "me": {"b"}}
CANDIDATES = ["a", "b", "c", "d"]


def test_a_location_never_reads_its_own_held_out_or_newer_links() -> None:
    citing = sorted(REFERENCES)  # me, mid, new, old
    links = link_matrix(REFERENCES, citing, CANDIDATES)
    keys = {"old": (2001,), "mid": (2002,), "me": (2002,), "new": (2003,)}
    visible = visible_citing(citing, ["me", "me"], hidden={"mid"}, keys=keys)
    assert visible[0].tolist() == [False, False, False, True]  # only "old"
    prefetch = np.zeros((2, 4))
    signals = graph_signals(links, visible, prefetch)
    # b is cited by "me" (its own paper: never read) and by "old"
    assert np.expm1(signals["popularity"][0]).round(6).tolist() == [1.0, 1.0, 0.0, 0.0]
    # without the time filter and nothing hidden: every paper but its own
    everything = graph_signals(links, visible_citing(citing, ["me"]), prefetch[:1])
    assert np.expm1(everything["popularity"][0]).round(6).tolist() == [3.0, 2.0, 2.0, 0.0]


def test_neighbours_and_cocitations() -> None:
    citing = ["p", "q", "r"]
    links = link_matrix({"p": {"a", "b"}, "q": {"a", "c"}, "r": {"d"}}, citing, CANDIDATES)
    visible = np.ones((1, 3), bool)
    prefetch = np.array([[4.0, 3.0, 2.0, 1.0]])  # a first
    similarity = np.array([[0.9, 0.1, 0.5]])  # the manuscript is most like p
    signals = graph_signals(links, visible, prefetch, similarity, neighbours=2, feedback=1)
    # p and r are the two nearest: p votes for a and b (0.9), r for d (0.5); q is too far
    assert signals["neighbours"][0].round(6).tolist() == [0.9, 0.9, 0.0, 0.5]
    # co-cited with a (the feedback candidate): b by p, c by q; a not with itself
    assert signals["cocited"][0].tolist() == [0.0, 1.0, 1.0, 0.0]
    # a citing paper without a similarity (no vector: −inf) never votes, even when fewer
    # papers than ``neighbours`` are visible
    unknown = graph_signals(links, visible, prefetch, np.array([[0.9, -np.inf, np.nan]]))
    assert unknown["neighbours"][0].round(6).tolist() == [0.9, 0.9, 0.0, 0.0]


def test_a_corpus_without_links_gives_zeros() -> None:
    location = Location("me", ["A sentence.", "It cites [1]."], 1, ["a"])
    data = CitrecData([location], {p: (p, None) for p in CANDIDATES}, {})
    signals = graph_scores(data, [location], CANDIDATES, np.zeros((1, 4)), np.ones((1, 4)),
                           set(), "time")
    assert all(not values.any() for values in signals.values())
    # recommend: no graph, or no link among the prefetched, is no evidence either
    assert not any(v.any() for v in graph_rows(None, ["a", "b"], ()).values())
    graph = CitationGraph.from_table(pa.table({"citing_id": ["x"], "cited_id": ["z"]}))
    assert not any(v.any() for v in graph_rows(graph, ["a", "b"], ()).values())


def test_recommend_reads_the_corpus_graph_but_not_the_manuscript_itself() -> None:
    graph = CitationGraph.from_table(pa.table({"citing_id": ["x", "x", "y", "me"],
                                               "cited_id": ["a", "b", "a", "b"]}))
    rows = graph_rows(graph, ["a", "b", "c"], exclude={"me"},
                       similarity=lambda papers: np.array([{"x": 0.2, "y": 0.8}[p]
                                                           for p in papers]))
    assert np.expm1(rows["popularity"][0]).round(6).tolist() == [2.0, 1.0, 0.0]
    assert rows["cocited"][0].tolist() == [1.0, 1.0, 0.0]  # a and b, by x (not by "me")
    assert rows["neighbours"][0].round(6).tolist() == [1.0, 0.2, 0.0]


def test_a_graph_weight_that_comes_out_negative_is_left_out() -> None:
    rng = np.random.default_rng(0)
    prefetch = rng.normal(size=(80, 50))
    relevant = [[int(np.argsort(-row)[rng.integers(0, 20)])] for row in prefetch]
    helpful = rng.normal(size=prefetch.shape)
    for i, (j,) in enumerate(relevant):
        helpful[i, j] += 3.0
    assert "popularity" in NONNEGATIVE
    names = ("prefetch", "popularity")
    free = fit_fusion(prefetch, {"popularity": -helpful}, relevant, names, depth=30,
                      nonnegative=())
    assert free.coefficients[1] < -0.5  # high where not cited: learnt when allowed
    fused = fit_fusion(prefetch, {"popularity": -helpful}, relevant, names, depth=30)
    assert fused.coefficients[1] == 0.0 and fused.coefficients[0] > 0
    kept = fit_fusion(prefetch, {"popularity": helpful}, relevant, names, depth=30)
    assert kept.coefficients[1] > 0.5
