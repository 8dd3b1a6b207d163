"""SciNCL triples: planted communities, rank windows, scaling on small graphs, the TALN graph."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from openmsd.corpus import Corpus
from openmsd.relations import RandomProjectionEmbedder
from openmsd.relations.scincl import TRIPLES_SCHEMA, scincl_triples

CLUSTERS, SIZE = 3, 60
WINDOWS = {"positive_ranks": (5, 10), "negative_ranks": (80, 85)}


def planted(clusters: int = CLUSTERS, size: int = SIZE, p_in: float = 0.3, bridges: int = 3,
            seed: int = 0) -> pa.Table:
    """Dense clusters joined by a few ``bridges`` per pair; ids ``c{cluster}-p{n}``."""
    rng = np.random.default_rng(seed)
    names = [f"c{c}-p{i:02d}" for c in range(clusters) for i in range(size)]
    pairs = []
    for c in range(clusters):
        nodes = np.arange(c * size, (c + 1) * size)
        for a in nodes:
            pairs += [(a, b) for b in nodes[nodes > a] if rng.random() < p_in]
        for other in range(c + 1, clusters):
            pairs += [(c * size + rng.integers(size), other * size + rng.integers(size))
                      for _ in range(bridges)]
    return pa.table({"citing_id": [names[a] for a, _ in pairs],
                     "cited_id": [names[b] for _, b in pairs]})


def cluster(ids: pa.ChunkedArray) -> np.ndarray:
    return np.array([name.split("-")[0] for name in ids.to_pylist()])


class Recording:
    """The default embedder, keeping what it returned."""

    def __init__(self) -> None:
        self.inner = RandomProjectionEmbedder(dim=32, seed=0)
        self.vectors = np.empty((0, 0), dtype=np.float32)
        self.edges: tuple[np.ndarray, np.ndarray] | None = None

    def __call__(self, edges: tuple[np.ndarray, np.ndarray], n_nodes: int) -> np.ndarray:
        self.edges = edges
        self.vectors = self.inner(edges, n_nodes)
        return self.vectors


def test_positives_come_from_the_query_cluster():
    result = scincl_triples(planted(), dim=32, **WINDOWS)
    triples = result.triples
    assert result.params.scale == 1.0
    assert result.params.n_nodes == CLUSTERS * SIZE
    assert triples.num_rows == CLUSTERS * SIZE * (5 + 5)
    query, positive = cluster(triples["query_id"]), cluster(triples["positive_id"])
    negative = cluster(triples["negative_id"])
    assert (query == positive).mean() > 0.9
    hard = np.array(triples["kind"].to_pylist()) == "hard"
    assert (query[hard] != negative[hard]).mean() > 0.9


def test_negatives_rank_below_positives_and_easy_ones_outside_top_k():
    embedder = Recording()
    triples = scincl_triples(planted(), embedder=embedder, **WINDOWS).triples
    ids = sorted(set(triples["query_id"].to_pylist()))  # every paper is a query here
    number = {name: i for i, name in enumerate(ids)}
    vectors = embedder.vectors / np.linalg.norm(embedder.vectors, axis=1, keepdims=True)
    similarity = vectors @ vectors.T
    np.fill_diagonal(similarity, -np.inf)
    rows = triples.to_pydict()
    q = np.array([number[x] for x in rows["query_id"]])
    p = np.array([number[x] for x in rows["positive_id"]])
    n = np.array([number[x] for x in rows["negative_id"]])
    hard = np.array(rows["kind"]) == "hard"
    assert (similarity[q, p] > similarity[q, n]).all()
    # rank of a negative = how many papers are closer to the query
    rank = (similarity[q] > similarity[q, n][:, None]).sum(axis=1)
    assert ((rank[hard] >= 80 - 1) & (rank[hard] <= 85)).all()  # slack for float ties
    assert (rank[~hard] >= 85 - 1).all()


def test_deterministic_for_a_seed_and_seed_matters():
    citations = planted()
    first = scincl_triples(citations, dim=32, seed=3, **WINDOWS).triples
    assert first.equals(scincl_triples(citations, dim=32, seed=3, **WINDOWS).triples)
    assert not first.equals(scincl_triples(citations, dim=32, seed=4, **WINDOWS).triples)


def test_batches_give_the_same_neighbours():
    citations = planted()
    whole = scincl_triples(citations, dim=32, **WINDOWS).triples
    batched = scincl_triples(citations, dim=32, batch_size=7, **WINDOWS).triples
    assert batched.num_rows == whole.num_rows
    hard = [name == "hard" for name in whole["kind"].to_pylist()]
    assert whole.filter(hard).equals(batched.filter(hard))
    assert whole["kind"].equals(batched["kind"])


def test_ids_are_original_no_self_pairs_no_positive_as_negative():
    citations = planted()
    triples = scincl_triples(citations, dim=32, **WINDOWS).triples
    assert triples.schema.equals(TRIPLES_SCHEMA)
    known = set(citations["citing_id"].to_pylist()) | set(citations["cited_id"].to_pylist())
    rows = triples.to_pydict()
    for column in ("query_id", "positive_id", "negative_id"):
        assert set(rows[column]) <= known
    assert set(rows["kind"]) == {"hard", "easy"}
    for q, p, n in zip(rows["query_id"], rows["positive_id"], rows["negative_id"], strict=True):
        assert q != p and q != n and p != n
    easy = [(q, n) for q, n, kind in zip(rows["query_id"], rows["negative_id"], rows["kind"],
                                         strict=True) if kind == "easy"]
    assert len(easy) == len(set(easy))  # drawn without replacement


def test_embedder_gets_each_link_once_and_nulls_and_self_links_are_dropped():
    embedder = Recording()
    citations = pa.table({"citing_id": ["a", "a", "b", "c", None, "d"],
                          "cited_id": ["b", "b", "c", "c", "a", "a"]})
    result = scincl_triples(citations, embedder=embedder)
    assert result.params.n_nodes == 4 and result.params.n_links == 3
    assert embedder.edges is not None
    assert sorted(zip(*(e.tolist() for e in embedder.edges), strict=True)) == [
        (0, 1), (1, 2), (3, 0)]


def test_windows_scale_down_on_a_small_graph():
    result = scincl_triples(planted(clusters=3, size=10, p_in=0.5, bridges=1), dim=16)
    params = result.params
    assert params.n_nodes == 30
    assert 0 < params.scale < 1
    (p0, p1), (n0, n1) = params.positive_ranks, params.negative_ranks
    assert 0 <= p0 < p1 <= n0 < n1 <= params.k <= (30 - 1) // 2
    assert params.easy_negatives == 5
    assert result.triples.num_rows == 30 * ((n1 - n0) + params.easy_negatives)


@pytest.mark.parametrize("n_nodes", [1, 2, 3, 4, 5, 8, 13])
def test_tiny_graphs_never_crash(n_nodes: int):
    names = [f"p{i}" for i in range(n_nodes)]
    citations = pa.table({"citing_id": names[1:] or ["p0"], "cited_id": names[:-1] or ["p0"]})
    result = scincl_triples(citations)
    assert result.triples.schema.equals(TRIPLES_SCHEMA)
    rows = result.triples.to_pydict()
    assert all(q != p and q != n and p != n for q, p, n in
               zip(rows["query_id"], rows["positive_id"], rows["negative_id"], strict=True))


def test_empty_citations_give_an_empty_table():
    empty = pa.table({"citing_id": pa.array([], pa.string()),
                      "cited_id": pa.array([], pa.string())})
    result = scincl_triples(empty)
    assert result.triples.num_rows == 0
    assert result.triples.schema.equals(TRIPLES_SCHEMA)
    assert result.params.n_nodes == 0


def test_bad_windows_are_rejected():
    with pytest.raises(ValueError):
        scincl_triples(planted(), positive_ranks=(20, 25), negative_ranks=(22, 30))
    with pytest.raises(ValueError):
        scincl_triples(planted(), k=10)


def test_taln_citation_graph(taln_corpus: Path):
    citations = Corpus(taln_corpus).read("citations")
    result = scincl_triples(citations)
    params = result.params
    linked = set(citations["citing_id"].to_pylist()) | set(citations["cited_id"].to_pylist())
    assert params.n_nodes == len(linked) > 300
    assert params.scale < 1  # ~600 papers cannot hold ranks up to 4005
    per_query = (params.negative_ranks[1] - params.negative_ranks[0]) + params.easy_negatives
    assert per_query > 0
    triples = result.triples
    assert triples.num_rows == params.n_nodes * per_query
    assert set(triples["query_id"].to_pylist()) == linked
    rows = triples.to_pydict()
    assert all(q != p and q != n and p != n for q, p, n in
               zip(rows["query_id"], rows["positive_id"], rows["negative_id"], strict=True))
