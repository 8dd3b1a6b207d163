"""The cheap candidate stage of fused rankers: candidates from the dense model's index and the
graph's linked papers, then every member scores only those, exactly as over the whole
collection."""

from __future__ import annotations

import faiss
import numpy as np
import pyarrow as pa
import pytest

from openmsd.index import VectorIndex
from openmsd.models import BM25
from openmsd.rank import DenseScorer, Fusion, Papers, Queries, combine, load_scorer
from openmsd.rank.scorer import ExactScorer, best_of, exclude_self, score_pools

N = 600
ENGLISH = ("graph neural network parsing syntax protein folding retrieval citation corpus "
           "language model translation speech tagging")
FRENCH = ("graphe réseau neuronal analyse syntaxique protéine recherche citation corpus langue "
          "modèle traduction parole étiquetage")
WORDS = {"en": ENGLISH.split(), "fr": FRENCH.split()}


def _collection() -> tuple[Papers, np.ndarray, pa.Table]:
    rng = np.random.default_rng(0)
    languages = rng.choice(["en", "fr"], N).tolist()
    texts = [" ".join(rng.choice(WORDS[lang], rng.integers(4, 25))) for lang in languages]
    english = [" ".join(rng.choice(WORDS["en"], 8)) if lang == "fr" else ""
               for lang in languages]
    papers = Papers([f"p{i:04d}" for i in range(N)], texts, languages, english)
    centres = rng.normal(size=(20, 32))
    vectors = centres[rng.integers(0, 20, N)] + 0.8 * rng.normal(size=(N, 32))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    citing, cited = rng.integers(0, N, 3000), rng.integers(0, N, 3000)
    keep = citing != cited
    citations = pa.table({"citing_id": [papers.ids[i] for i in citing[keep]],
                          "cited_id": [papers.ids[i] for i in cited[keep]]})
    return papers, vectors, citations


PAPERS, VECTORS, CITATIONS = _collection()


def _dense(index: VectorIndex | None = None) -> DenseScorer:
    def no_encoder():  # every query here is a corpus paper or brings its vector
        raise AssertionError("nothing should be encoded")
    return DenseScorer(PAPERS, "vectors", VECTORS, np.ones(N, bool), no_encoder,
                       (lambda: index) if index is not None else None)


def _index() -> VectorIndex:
    """An exact FAISS index of the vectors in another order than the collection's."""
    order = np.random.default_rng(1).permutation(N)
    flat = faiss.IndexFlatIP(VECTORS.shape[1])
    flat.add(VECTORS[order])
    return VectorIndex(flat, pa.table({"paper_id": [PAPERS.ids[i] for i in order],
                                       "language": [PAPERS.languages[i] for i in order],
                                       "year": pa.array([2000 + i % 20 for i in order],
                                                        pa.int32())}))


def test_bm25_scores_only_the_candidates_as_over_the_whole_collection():
    model = BM25().fit(PAPERS.texts, PAPERS.languages)
    queries = ["graph graph parsing of a language", "réseau neuronal et analyse", "zzz"]
    languages = ["en", "fr", "und"]
    candidates = np.sort(np.random.default_rng(2).choice(N, 40, replace=False))
    whole = model.scores(queries, languages)
    assert np.array_equal(model.scores(queries, languages, candidates), whole[:, candidates])
    assert whole[0].max() > 0


def test_bm25_candidates_in_any_order_score_as_the_whole_collection_bit_for_bit():
    model = BM25().fit(PAPERS.texts, PAPERS.languages)
    rng = np.random.default_rng(3)
    languages = rng.choice(["en", "fr", "und"], 60).tolist()
    # queries repeat words (a repeated token counts each time) and mix both languages
    queries = [" ".join(rng.choice(WORDS["en"] + WORDS["fr"], rng.integers(1, 12)))
               for _ in languages]
    whole = model.scores(queries, languages)
    candidates = rng.choice(N, 70)  # unsorted, some twice, under 1 / FEW of the collection
    assert len(candidates) * 8 < N and len(set(candidates.tolist())) < len(candidates)
    assert np.array_equal(model.scores(queries, languages, candidates), whole[:, candidates])
    assert (whole > 0).mean() > 0.2


@pytest.mark.parametrize("filtered", [False, True])
def test_dense_top_k_from_the_index_is_the_exact_top_k(filtered):
    queries = Queries.of_rows(PAPERS, [0, 7, 300])
    mask = np.array(PAPERS.languages) == "fr" if filtered else None
    exact = _dense().top_k(queries, 15, mask)
    indexed = _dense(_index()).top_k(queries, 15, mask)
    assert np.array_equal(indexed[0], exact[0])
    assert np.allclose(indexed[1], exact[1], atol=1e-5)
    assert not (indexed[0] == queries.rows[:, None]).any()  # never the query paper itself
    if filtered:
        assert (np.array(PAPERS.languages)[indexed[0]] == "fr").all()


def test_graph_top_k_reads_the_linked_papers_only_with_the_same_ranking():
    queries = Queries.of_rows(PAPERS, [3, 50, 599])
    mask = np.arange(N) % 3 != 0
    for name in ("citation", "co-citation", "coupling", "adamic-adar"):
        graph = load_scorer(name, PAPERS, citations=CITATIONS)
        assert graph.generates
        for filters in (None, mask):
            (rows, scores), every = (graph.top_k(queries, 12, filters),
                                     ExactScorer.top_k(graph, queries, 12, filters))
            assert np.array_equal(scores, every[1]), name  # the same scores, best first
            for i in range(len(queries)):  # the same papers, but which of equal scores at
                above = scores[i] > scores[i][-1]  # the 12th place make the cut is arbitrary
                assert set(rows[i][above]) == set(every[0][i][above]), name
                found = rows[i][rows[i] >= 0]
                assert np.array_equal(graph.score(queries.subset([i]), found)[0],
                                      scores[i][rows[i] >= 0]), name
                if filters is not None:
                    assert filters[found].all()


def test_cheap_pool_ranks_its_candidates_as_the_exhaustive_fusion_does():
    cache = {"vectors": _dense(_index())}
    members = ["bm25@same", "vectors", "bm25-en", "citation", "co-citation", "coupling"]
    scorers = [load_scorer(m, PAPERS, citations=CITATIONS, cache=cache) for m in members]
    cheap = Fusion("cheap", scorers, pool="cheap", pool_depth=30)
    exhaustive = Fusion("all", scorers, pool="all")
    every = np.arange(N)
    for row in (0, 11, 420):
        query = Queries.of_rows(PAPERS, [row])
        pool = cheap.candidates(query)[0]
        # the pool: the dense model's 30 best and the graph's linked papers, no BM25 scan
        dense_best = cache["vectors"].top_k(query, 30)[0][0]
        linked = load_scorer("citation", PAPERS, citations=CITATIONS).top_k(query, N)[0][0]
        assert set(dense_best) | set(linked[linked >= 0]) <= set(pool.tolist())
        assert len(pool) < N / 4
        # each member's scores of the whole collection, restricted to the pool, fused
        parts = [exclude_self(np.array(s.score(query, every), np.float32), query, every)[:, pool]
                 for s in scorers]
        expected = best_of(combine(parts, cheap.weights, "rrf"), pool, 10)
        rows, scores = cheap.top_k(query, 10)
        assert np.array_equal(rows, expected[0]) and np.allclose(scores, expected[1])
        assert row not in rows[0]
        # the exhaustive mode draws its pool from every member's top 100
        assert len(exhaustive.candidates(query)[0]) >= len(set(dense_best))


def test_every_querys_pool_scored_at_once_as_one_query_at_a_time():
    """score_pools (BM25 analysing the batch, graph rows in one product) gives each query's
    candidates the same float32 scores as one score() call per query."""
    cache = {"vectors": _dense(_index())}
    members = ["bm25@same", "vectors", "bm25-en", "bm25", "citation", "co-citation",
               "coupling", "adamic-adar"]
    cheap = Fusion("cheap", [load_scorer(m, PAPERS, citations=CITATIONS, cache=cache)
                             for m in members], pool_depth=30)
    cheap.members.append(load_scorer("vectors@en", PAPERS, cache=cache))
    queries = Queries.of_rows(PAPERS, [0, 11, 420, 599, 11])
    # a query of no language of the collection (no pair heard) and one of unknown language
    texts = Queries.of_texts(["graph parsing citation", "réseau neuronal analyse",
                              "graph Netzwerk", "citation corpus"], ["en", "fr", "de", "und"])
    texts.vectors["vectors"] = VECTORS[[3, 7, 9, 12]]  # as a served encoder would hand them
    for batch in (queries, texts):
        pools = cheap.candidates(batch)
        for member in cheap.members:
            batched = score_pools(member, batch, pools)
            for i, pool in enumerate(pools):
                one = np.asarray(member.score(batch.subset([i]), pool), np.float32)[0]
                assert batched[i].dtype == np.float32 and np.array_equal(batched[i], one), \
                    member.name


def test_a_fusion_scores_its_dense_candidates_from_the_vectors_its_top_k_read():
    """While a fusion ranks, the dense member's score_pools copies its candidates' vectors
    from those its top_k read (a graph member's candidates from the collection's matrix):
    the same float32 scores as one score() per query; nothing is kept afterwards."""
    dense = _dense(_index())
    cheap = Fusion("cheap", [dense, load_scorer("citation", PAPERS, citations=CITATIONS)],
                   pool_depth=30)
    texts = Queries.of_texts(["graph parsing", "réseau neuronal"], ["en", "fr"])
    texts.vectors["vectors"] = VECTORS[[3, 7]]
    for batch in (Queries.of_rows(PAPERS, [0, 11, 420, 11]), texts):
        batch.read = {}
        pools = cheap.candidates(batch)
        rows, read = batch.read["vectors"]
        assert read.shape == (len(batch), 31, VECTORS.shape[1])
        assert np.array_equal(read, VECTORS[np.maximum(rows, 0)])
        linked = [np.setdiff1d(pool, rows[i]) for i, pool in enumerate(pools)]
        assert any(len(extra) for extra in linked) == (batch.rows >= 0).all()
        for i, (scores, pool) in enumerate(zip(dense.score_pools(batch, pools), pools,
                                               strict=True)):
            one = np.asarray(dense.score(batch.subset([i]), pool), np.float32)[0]
            assert np.array_equal(scores, one)
        batch.read = None
        cheap.top_k_explained(batch, 5)
        assert batch.read is None and batch.subset([0]).read is None


def test_what_each_member_said_is_its_score_and_rank_among_the_candidates():
    """top_k_explained: per result and member, the member's exact score of it and its rank
    among the query's candidates (1 + the candidates it scores higher; None: no score)."""
    cache = {"vectors": _dense(_index())}
    members = ["bm25@same", "vectors", "bm25-en", "citation", "co-citation", "coupling"]
    fused = Fusion("cheap", [load_scorer(m, PAPERS, citations=CITATIONS, cache=cache)
                             for m in members], pool_depth=30)
    queries = Queries.of_rows(PAPERS, [0, 11, 420])
    rows, _, said = fused.top_k_explained(queries, 12)
    pools = fused.candidates(queries)
    unranked = 0
    for i, pool in enumerate(pools):
        parts = fused.member_scores(queries.subset([i]), pool)
        for n, row in enumerate(rows[i][rows[i] >= 0]):
            at = int(np.flatnonzero(pool == row)[0])
            for member, part, c in zip(fused.members, parts, said[i][n], strict=True):
                assert c.member == member.name and c.score == float(part[0, at])
                if np.isfinite(part[0, at]):
                    assert c.rank == 1 + int((part[0] > part[0, at]).sum())
                else:
                    assert c.rank is None
                    unranked += 1
    assert unranked  # some member had nothing to say of some result


def test_a_fusion_without_a_dense_member_keeps_every_members_candidates():
    fused = load_scorer("bm25+coupling", PAPERS, citations=CITATIONS)
    query = Queries.of_rows(PAPERS, [5])
    lexical = load_scorer("bm25", PAPERS).top_k(query, 100)[0][0]
    assert set(lexical[lexical >= 0]) <= set(fused.candidates(query)[0].tolist())


def test_a_query_is_encoded_once_and_its_vector_follows_subsets():
    queries = Queries.of_texts(["free text one", "free text two"], ["en", "en"])
    queries.vectors["vectors"] = VECTORS[[4, 9]]
    dense = _dense(_index())
    rows, _ = dense.top_k(queries, 5)  # would raise if it encoded
    assert rows[0][0] == 4 and rows[1][0] == 9
    assert np.array_equal(queries.subset([1]).vectors["vectors"], VECTORS[[9]])


def test_an_index_build_folder_newer_than_the_model_names_no_model(tmp_path):
    """After `index build` switched a new build in, `index/.builds` can be newer than every
    model's link: the default dense model is still the model (the server once tried to load a
    ranker named '.builds')."""
    import os

    from openmsd.corpus import Corpus
    from openmsd.rank import default_dense, dense_models

    built = tmp_path / "index" / ".builds" / "muse-v3" / "b1"
    built.mkdir(parents=True)
    (built / "index.faiss").write_bytes(b"x")
    (tmp_path / "index" / "muse-v3").symlink_to(built)
    later = (tmp_path / "index" / ".builds" / "muse-v3" / "b2")
    later.mkdir()
    (later / "index.faiss").write_bytes(b"x")
    os.utime(later / "index.faiss", (2e9, 2e9))
    corpus = Corpus(tmp_path)
    assert dense_models(corpus) == ["muse-v3"] and default_dense(corpus) == "muse-v3"
