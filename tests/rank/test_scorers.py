"""The scorers behind every ranking: BM25 per language, its English view, graph scorers,
fusion, and the names that make them."""

from __future__ import annotations

import numpy as np
import orjson
import pyarrow as pa
import pytest

from openmsd.rank import Fusion, Papers, Queries, UnknownScorerError, combine, load_scorer
from openmsd.rank.fusion import reciprocal_ranks
from openmsd.rank.graph import GRAPH_SCORERS
from openmsd.rank.load import split_fusion

PAPERS = Papers(
    ids=["fr1", "fr2", "en1", "en2", "fr3"],
    texts=["Les réseaux neuronaux pour l'analyse syntaxique",
           "Un réseau neuronal et des analyses syntaxiques du français",
           "Protein folding with deep networks",
           "Neural parsing with graphs",
           "Étiquetage morphosyntaxique"],
    languages=["fr", "fr", "en", "en", "fr"],
    english=["Neural networks for syntactic parsing", "A neural network and syntactic "
             "analyses of French", "", "", "Part-of-speech tagging"])
#: fr1 cites fr2 and en2; fr3 cites fr2 and en2 (fr1 and fr3 coupled); en1 cites fr1 and fr3
#: (fr1 and fr3 co-cited)
CITATIONS = pa.table({"citing_id": ["fr1", "fr1", "fr3", "fr3", "en1", "en1"],
                      "cited_id": ["fr2", "en2", "fr2", "en2", "fr1", "fr3"]})


def test_bm25_stems_each_language_and_never_returns_the_query():
    bm25 = load_scorer("bm25", PAPERS)
    rows, _ = bm25.top_k(Queries.of_rows(PAPERS, [0]), 5)
    # "réseaux neuronaux … syntaxique" meets "réseau neuronal … syntaxiques" by stems only
    assert rows[0][0] == 1 and 0 not in rows[0]
    assert (rows[0] == -1).sum() >= 2  # no shared word: not a candidate at all
    free = bm25.top_k(Queries.of_texts(["folding proteins"], ["und"]), 2)[0]
    assert free[0][0] == 2  # a query of unknown language is read in every corpus language


def test_english_view_matches_across_languages():
    query = Queries.of_rows(PAPERS, [3])  # "Neural parsing with graphs" (en)
    original = load_scorer("bm25", PAPERS).score(query, np.arange(5))[0]
    english = load_scorer("bm25-en", PAPERS).score(query, np.arange(5))[0]
    assert not np.isfinite(original[0])  # no French word in common
    assert np.isfinite(english[0]) and english[0] > 0  # "neural", "parsing" in English


def test_graph_scorers_count_links():
    queries = Queries.of_rows(PAPERS, [0])  # fr1
    everything = np.arange(5)

    def scores(name: str) -> list[float]:
        return load_scorer(name, PAPERS, citations=CITATIONS).score(queries, everything)[0]

    assert scores("citation")[[1, 2, 3]].tolist() == [1, 1, 1]  # fr2, en2 cited; en1 cites
    assert scores("coupling")[4] == 2  # fr1 and fr3 share fr2 and en2
    assert scores("co-citation")[4] == 1  # both cited by en1
    assert not np.isfinite(scores("coupling")[2])  # no shared reference: no evidence
    for name in set(GRAPH_SCORERS) - {"citation"}:
        assert np.isfinite(scores(name)[4]), name  # fr3, two hops away
    hidden = load_scorer("citation", PAPERS, citations=CITATIONS, hidden=[("fr2", "fr1")])
    assert not np.isfinite(hidden.score(queries, everything)[0][1])
    text_query = Queries.of_texts(["anything"], ["en"])
    assert not np.isfinite(load_scorer("adamic-adar", PAPERS, citations=CITATIONS)
                           .score(text_query, everything)).any()


def test_fusion_rrf_and_weighted():
    a = np.array([[3.0, 2.0, 1.0, -np.inf]], np.float32)
    b = np.array([[-np.inf, 1.0, 2.0, 3.0]], np.float32)
    assert reciprocal_ranks(a).tolist()[0][:3] == pytest.approx([1 / 61, 1 / 62, 1 / 63])
    # several rows with ties (ranked by column) and silent places: each row its own ranks
    many = np.array([[2.0, 2.0, -np.inf, 5.0], [1.0, -np.inf, 1.0, 1.0]], np.float32)
    assert np.allclose(reciprocal_ranks(many),
                       [[1 / 62, 1 / 63, 0, 1 / 61], [1 / 61, 0, 1 / 62, 1 / 63]])
    rrf = combine([a, b], [1, 1], "rrf")[0]
    assert rrf.argmax() in (1, 2) and np.all(np.isfinite(rrf))
    only_a = combine([a, b], [1, 0], "weighted")[0]
    assert only_a.tolist() == pytest.approx([1, 0.5, 0, 0])
    with pytest.raises(ValueError, match="rrf"):
        combine([a], [1], "max")


def test_zscore_fusion_weighs_a_lone_match_as_an_average_candidate():
    # BM25 matches one word with a single paper (column 0); the dense model ranks column 1
    # far above the rest and column 0 in the middle
    lexical = np.array([[4.2, -np.inf, -np.inf, -np.inf, -np.inf]], np.float32)
    dense = np.array([[0.78, 0.90, 0.80, 0.77, 0.76]], np.float32)
    assert combine([lexical, dense], [1, 1], "rrf")[0].argmax() == 0  # the lone match first
    assert combine([lexical, dense], [1, 1], "zscore")[0].argmax() == 1
    # several matches: the strong one stands out; a weak one falls below a paper the dense
    # model ranks a little lower and BM25 does not hear
    lexical = np.array([[9.0, 1.0, 1.2, -np.inf, -np.inf]], np.float32)
    fused = combine([lexical, dense], [1, 1], "zscore")[0]
    assert fused[0] > fused[2] and fused[2] < fused[3]
    assert combine([lexical, dense], [1, 1], "rrf")[0][2] > combine(
        [lexical, dense], [1, 1], "rrf")[0][3]


def test_fused_ranker_names_and_explanations():
    fused = load_scorer("bm25+bm25-en+coupling", PAPERS, citations=CITATIONS)
    assert isinstance(fused, Fusion) and fused.signal == "graph"
    assert [m.name for m in fused.members] == ["bm25", "bm25-en", "coupling"]
    queries = Queries.of_rows(PAPERS, [0])
    rows, _, explained = fused.top_k_explained(queries, 3)
    assert 0 not in rows[0] and rows[0][0] == 1
    assert (fused.top_k(queries, 3)[0] == rows).all()
    said = explained[0][0]
    assert [c.member for c in said] == ["bm25", "bm25-en", "coupling"]
    assert said[0].rank == 1
    # a paper without text still gets graph results
    bare = Papers(PAPERS.ids, ["", *PAPERS.texts[1:]], PAPERS.languages)
    found = load_scorer("bm25+co-citation", bare, citations=CITATIONS).top_k(
        Queries.of_rows(bare, [0]), 2)[0][0]
    assert found[0] == 4  # fr3, co-cited with fr1
    assert split_fusion("e5-small-multilingual+llm64+bm25") == ["e5-small-multilingual+llm64",
                                                                 "bm25"]


def test_language_pair_scorer_and_unknown_names():
    english_only = load_scorer("bm25@en", PAPERS)
    scores = english_only.score(Queries.of_rows(PAPERS, [3]), np.arange(5))[0]
    assert not np.isfinite(scores[[0, 1, 4]]).any()  # French candidates: not heard
    assert not np.isfinite(english_only.score(Queries.of_rows(PAPERS, [0]), np.arange(5))).any()
    query = Queries.of_rows(PAPERS, [0])  # fr1: its English text shares words with en2
    assert np.isfinite(load_scorer("bm25-en", PAPERS).score(query, np.arange(5))[0][3])
    same = load_scorer("bm25-en@same", PAPERS).score(query, np.arange(5))[0]
    assert np.isfinite(same[1]) and not np.isfinite(same[[2, 3]]).any()
    with pytest.raises(UnknownScorerError, match=r"unknown ranker 'bm52'.*bm25, bm25-en"):
        load_scorer("bm52", PAPERS)
    with pytest.raises(UnknownScorerError, match="needs a corpus"):
        load_scorer("ppr", PAPERS)


def test_cross_pairs_are_the_ones_same_does_not_hear():
    """``@cross`` hears the pairs of two languages, so ``bm25@same`` and ``bm25-en@cross``
    count each pair once; a free text the English view cannot read (French words against
    English ones) or of unknown language is heard by none of its pairs."""
    everything = np.arange(5)
    for queries in (Queries.of_rows(PAPERS, [0, 3]),
                    Queries.of_texts(["neural parsing", "réseaux neuronaux", "neural"],
                                     ["en", "fr", "und"])):
        same = load_scorer("bm25@same", PAPERS).heard(queries, everything)
        cross = load_scorer("bm25-en@cross", PAPERS)
        heard = cross.heard(queries, everything)
        assert not (same & heard).any()
        if queries.rows[0] >= 0:  # fr1 (with an English text) and en2: every other pair
            assert (same | heard).all()
        else:
            assert heard[0].tolist() == [True, True, False, False, True]  # en: the French
            assert not heard[1:].any()  # a French text without English words; und: @same's
    # en2 ("Neural parsing with graphs") meets fr1 and fr2 through their English titles
    scores = load_scorer("bm25-en@cross", PAPERS).score(Queries.of_rows(PAPERS, [3]),
                                                         everything)[0]
    assert np.isfinite(scores[[0, 1]]).all() and not np.isfinite(scores[[2, 3]]).any()


def test_shared_references_couple_through_works_outside_the_corpus(tmp_path):
    from openmsd.rank.graph import reference_works

    references = pa.table({
        "citing_id": ["fr1", "fr3", "fr1", "en1", "fr3"],
        "cited_id": [None, None, "fr2", None, "fr2"],
        "title": ["Introduction to WordNet: an on-line lexical database",
                  "introduction to wordnet, an on-line lexical DATABASE", None,
                  "Introduction", None]})
    works = reference_works(PAPERS, references)[0]
    coupled = (works @ (works > 0).astype(np.float32).T).toarray()
    # fr1 and fr3 share an outside work (the same title, written differently) and fr2
    assert coupled[0, 4] == pytest.approx(2 / np.log(3))
    assert coupled[0, 2] == 0  # "Introduction" names no work
    # hiding fr1 → fr2 removes that reference (and only it) before the weights are counted
    left = reference_works(PAPERS, references, [("fr2", "fr1")])[0]
    hidden = (left @ (left > 0).astype(np.float32).T).toarray()
    assert hidden[0, 4] == pytest.approx(1 / np.log(3)) and hidden[4, 4] > hidden[0, 4]
    # over given citations (no corpus): coupling through the cited papers
    scorer = load_scorer("shared-references", PAPERS, citations=CITATIONS)
    rows, _ = scorer.top_k(Queries.of_rows(PAPERS, [0]), 3)
    assert rows[0][0] == 4 and (rows[0][1:] == -1).all()


def test_shared_references_say_how_many_works_are_outside_the_corpus():
    from openmsd.rank import signals, why
    from openmsd.rank.graph import reference_works, shared_works

    references = pa.table({
        "citing_id": ["fr1", "fr3", "fr1", "fr3", "fr1", "en1"],
        "cited_id": [None, None, "fr2", "fr2", None, None],
        "title": ["Introduction to WordNet: an on-line lexical database",
                  "introduction to wordnet, an on-line lexical DATABASE", None, None,
                  "A maximum entropy approach to natural language processing",
                  "A maximum entropy approach to natural language processing"]})
    works, outside = reference_works(PAPERS, references)
    assert outside.sum() == 2 and len(outside) == 3  # WordNet and maxent outside, fr2 inside
    said = shared_works(works, outside, 0, np.arange(5))
    assert said[4] == "2 shared references, 1 outside the corpus"  # fr3: WordNet and fr2
    assert said[2] == "1 shared reference, 1 outside the corpus"  # en1: maxent
    assert said[0] is None and said[1] is None and said[3] is None
    assert shared_works(works, outside, -1, np.arange(5)) == [None] * 5  # free text
    # a fusion holding shared-references says it for each result, in place of the in-corpus
    # count of the citation graph
    fused = load_scorer("bm25+shared-references", PAPERS, citations=CITATIONS)
    rows, _, contributions = fused.top_k_explained(Queries.of_rows(PAPERS, [0]), 4)
    at = list(rows[0]).index(4)
    assert signals(contributions[0][at])[-1] == "2 shared references"  # fr2 and en2
    assert why(signals(contributions[0][at]), ["1 shared reference", "co-cited 1 time"]) == [
        *signals(contributions[0][at])[:-1], "2 shared references", "co-cited 1 time"]


def test_fallback_weights_rank_queries_a_member_is_silent_for():
    from openmsd.rank import Fallback, fuse

    words = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]], np.float32)
    dense = np.array([[3.0, 2.0, 1.0], [1.0, 2.0, 3.0]], np.float32)
    authors = np.array([[2.0, -np.inf, -np.inf], [-np.inf, -np.inf, -np.inf]], np.float32)
    # the main weights trust dense; without authors the fallback trusts words
    fallback = Fallback(silent=(2,), members=(0,), weights=(1.0,), method="weighted")
    fused = fuse([words, dense, authors], [0.1, 0.5, 0.4], "weighted", [fallback])
    assert fused[0].argmax() == 0  # authors spoke: the main weights (dense and authors)
    assert fused[1].argmax() == 0 and fused[1].tolist() == pytest.approx([1, 0.5, 0])
    plain = combine([words, dense, authors], [0.1, 0.5, 0.4], "weighted")
    assert plain[1].argmax() == 2  # without the fallback dense would rank the free text
    with pytest.raises(ValueError, match="fallback"):
        Fusion("f", [load_scorer("bm25", PAPERS)], [1.0], "weighted",
               fallbacks=[Fallback((3,), (0,), (1.0,), "weighted")])


def test_untuned_hybrid_adds_the_english_model_where_it_can_be_had(tmp_path):
    """English pairs hear minilm-en beside the multilingual model over files, and over a corpus
    with its vectors; a corpus without them keeps BM25 and its dense model."""
    from openmsd.corpus import Corpus
    from openmsd.rank.load import fusion_spec

    assert list(fusion_spec("hybrid", None).members) == [
        "bm25@same", "e5-small-multilingual", "minilm-en@en"]
    for model in ("muse-v3", "minilm-en"):
        (tmp_path / "vectors" / model).mkdir(parents=True)
        (tmp_path / "vectors" / model / "part-0.parquet").write_bytes(b"x")
    assert list(fusion_spec("hybrid", Corpus(tmp_path), "muse-v3").members) == [
        "bm25@same", "muse-v3", "minilm-en@en"]
    assert list(fusion_spec("hybrid", Corpus(tmp_path), "minilm-en").members) == [
        "bm25@same", "minilm-en"]
    (tmp_path / "vectors" / "minilm-en" / "part-0.parquet").unlink()
    assert list(fusion_spec("hybrid", Corpus(tmp_path)).members) == ["bm25@same", "muse-v3"]
    assert "minilm-en@en" not in list(fusion_spec("hybrid-graph", None).members)


def test_untuned_hybrid_compares_words_across_languages_in_a_multilingual_corpus(tmp_path):
    """``bm25-en@cross`` joins the untuned ``hybrid`` of a corpus of several languages, and
    an English sentence then finds the Portuguese paper whose English title it repeats."""
    from openmsd.corpus import Corpus
    from openmsd.ingest import ingest
    from openmsd.rank import corpus_papers
    from openmsd.rank.load import fusion_spec

    works = tmp_path / "works.jsonl"
    rows = [("pt1", "pt", "Fatores associados à SRAG por COVID-19 em idosos com doença "
             "cardiovascular", "Factors associated with severe acute respiratory syndrome by "
             "COVID-19 in older people with cardiovascular disease")]
    rows += [(f"en{i}", "en", f"COVID-19 and {topic} in older adults", None)
             for i, topic in enumerate(["kidney disease", "vaccination", "intensive care"])]
    works.write_text("".join(orjson.dumps(
        {"id": i, "language": lang, "title": title,
         **({"translations": {"en": {"title": en}}} if en else {})}).decode() + "\n"
        for i, lang, title, en in rows))
    corpus = Corpus(tmp_path / "corpus")
    ingest([works], corpus.root, None, False)
    assert list(fusion_spec("hybrid", corpus, "bm25").members) == ["bm25@same", "bm25",
                                                                "bm25-en@cross"]
    papers = corpus_papers(corpus)
    query = Queries.of_texts(["Severe acute respiratory syndrome by COVID-19 in older people "
                              "with cardiovascular disease"], ["en"])
    def found(scorer: str) -> list[str]:
        rows = load_scorer(scorer, papers).top_k(query, 4)[0][0]
        return [papers.ids[r] for r in rows if r >= 0]

    assert "pt1" not in found("bm25@same")  # an English query: Portuguese words not heard
    assert found("bm25-en@cross") == ["pt1"]  # its English title; English pairs are @same's
    assert "pt1" in found("bm25@same+bm25-en@cross")[:2]  # first of its member, like en0


def test_graph_nodes_and_works_are_numbered_in_the_order_first_met():
    from openmsd.rank.graph import adjacency, reference_works

    papers = Papers(["p0", "p1"], ["", ""], ["en", "en"])
    citations = pa.table({"citing_id": ["x", "p1", "y", "x"], "cited_id": ["p0", "z", "x", "p0"]})
    matrix, n = adjacency(papers, citations, others=["o", "p1"])
    # p0, p1, then the other ids ("o", then x, z, y as the rows name them, citing first)
    assert n == 6
    assert sorted(zip(*matrix.nonzero(), strict=True)) == [(1, 4), (3, 0), (5, 3)]
    assert matrix.max() == 1  # a repeated citation counts once
    hidden, _ = adjacency(papers, citations, hidden=[("p0", "x")])
    assert sorted(zip(*hidden.nonzero(), strict=True)) == [(1, 2), (3, 4)]
    references = pa.table({
        "citing_id": ["p1", "p0", "p1", "p0", "p1"],
        "cited_id": [None, "p1", None, "p0", None],
        "title": ["A long title of some work", None, "Another long title of a work", None,
                  "Short"]})
    works, outside = reference_works(papers, references)
    assert works.shape == (2, 3)  # "Short" names no work, p0 citing itself is left out
    assert works[1].indices.tolist() == [0, 2] and works[0].indices.tolist() == [1]
    assert outside.tolist() == [True, False, True]
