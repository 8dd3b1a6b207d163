"""``recommend`` a researcher can trust: never the manuscript itself (on the shipped sample),
each location ranked by its own sentence first, drivers from the location, co-cited sets."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from openmsd.corpus import Corpus
from openmsd.index import build_index
from openmsd.ingest import read_manuscript
from openmsd.models import embed_corpus, load_model
from openmsd.rank import LocationRanking, RankWeights, cited_count, location_hits
from openmsd.search import CitationRequest, recommend_citations
from openmsd.search.recommend import corpus_signals, manuscript_papers

SAMPLE_JATS = Path(__file__).resolve().parents[3] / "openmsd" / "data" / "sample" / "scielo-jats"


def _recommend(corpus, text, encoder, model, k, **options) -> list[dict]:
    """``recommend_citations`` of a :class:`CitationRequest`, each location as JSON shows it."""
    found = recommend_citations(corpus, CitationRequest(text, model, k, **options), encoder)
    return [location.as_dict() for location in found]


@pytest.fixture(scope="module")
def jats_corpus(tiny_model, tmp_path_factory) -> tuple[Corpus, object, str]:
    from openmsd.ingest import ingest

    root = tmp_path_factory.mktemp("jats") / "corpus"
    ingest([SAMPLE_JATS], root)
    corpus = Corpus(root)
    encoder = load_model(str(tiny_model))
    embed_corpus(corpus, encoder, str(tiny_model))
    build_index(corpus, str(tiny_model))
    return corpus, encoder, str(tiny_model)


def test_the_manuscript_is_never_its_own_recommendation(jats_corpus) -> None:
    corpus, encoder, model = jats_corpus
    checked = itself_found = 0
    for path in sorted(SAMPLE_JATS.glob("*.xml*")):
        try:
            document = read_manuscript(path)
        except ValueError:
            continue  # a shipped file without a body
        own = manuscript_papers(corpus, document.ids, document.title)
        if not own:
            continue
        checked += 1
        unguarded = _recommend(corpus, document.text, encoder, model, 5,
                                        manuscript_title="", max_locations=5)
        itself_found += any(r["paper_id"] in own for loc in unguarded for r in loc["results"])
        found = _recommend(corpus, document.text, encoder, model, 5, max_locations=5,
                                    manuscript_ids=document.ids, manuscript_title=document.title)
        assert found and all(len(loc["results"]) == 5 for loc in found)
        assert not [r["paper_id"] for loc in found for r in loc["results"]
                    if r["paper_id"] in own], path.name
    assert checked >= 5
    assert itself_found >= 1  # without the guard the manuscript does come back


def test_title_of_a_plain_text_manuscript_is_matched(jats_corpus) -> None:
    corpus, encoder, model = jats_corpus
    document = read_manuscript(next(p for p in sorted(SAMPLE_JATS.glob("*.xml*"))
                                    if read_manuscript(p).title))
    own = manuscript_papers(corpus, [], document.title.upper() + " !")
    assert own and own == manuscript_papers(corpus, document.ids)
    text = document.title + "\n\n" + document.text
    found = _recommend(corpus, text, encoder, model, 5, max_locations=3)
    assert not [r for loc in found for r in loc["results"] if r["paper_id"] in own]


def test_locations_rank_by_their_own_sentence_and_drivers_come_from_them(jats_corpus) -> None:
    corpus, encoder, model = jats_corpus
    text = ("Soil erosion reduces crop yields in tropical farms [1]. "
            "Public health surveillance of dengue relies on notification systems [2].")
    first, second = _recommend(corpus, text, encoder, model, 5, explain=True)
    assert first["markers"] == ["[1]"] and second["markers"] == ["[2]"]
    assert [r["paper_id"] for r in first["results"]] != [r["paper_id"] for r in
                                                         second["results"]]
    for location in (first, second):
        for result in location["results"]:
            assert result["drivers"]
            assert all(d["sentence"] in location["context"] for d in result["drivers"])


def test_cited_count_and_cocited_set(jats_corpus) -> None:
    corpus, encoder, model = jats_corpus
    assert cited_count("As in [3, 5-7].") == 4 and cited_count("See {{cite:a,b}}.") == 2
    assert cited_count("(Smith, 2020; Doe 2019) and [4]") == 3 and cited_count("none") == 0
    found = _recommend(corpus, "Dengue notification and vector control [3, 4].", encoder,
                                model, 5)
    assert found[0]["cites"] == 2 and len(found[0]["cocited_set"]) == 2
    assert found[0]["cocited_set"][0] == found[0]["results"][0]["paper_id"]


@pytest.mark.slow
def test_results_say_what_they_are_co_cited_with(tiny_model, taln_corpus, tmp_path) -> None:
    """On TALN (real co-citations): each result's ``co_cited_with`` is exactly the other
    results it is co-cited with in the corpus, each also said in ``why``."""
    import shutil
    from collections import Counter
    from itertools import combinations

    import pyarrow.parquet as pq

    corpus = Corpus(shutil.copytree(taln_corpus, tmp_path / "corpus"))
    rows = pq.read_table(corpus.root / "citations.parquet").to_pylist()
    cited_by: dict[str, set[str]] = {}
    for row in rows:
        cited_by.setdefault(row["citing_id"], set()).add(row["cited_id"])
    pairs = Counter(pair for cited in cited_by.values() for pair in combinations(sorted(cited), 2))
    (a, b), _ = pairs.most_common(1)[0]
    papers = pq.read_table(corpus.root / "papers.parquet", columns=["paper_id", "title"])
    titles = dict(zip(*papers.to_pydict().values(), strict=True))
    encoder = load_model(str(tiny_model))
    embed_corpus(corpus, encoder, str(tiny_model))
    build_index(corpus, str(tiny_model))
    found = _recommend(corpus, f"{titles[a]} {titles[b]} [1, 2].", encoder,
                                str(tiny_model), 100)[0]
    ids = [r["paper_id"] for r in found["results"]]
    said = 0
    for result in found["results"]:
        partners = {p for p in ids if p != result["paper_id"]
                    and tuple(sorted((p, result["paper_id"]))) in pairs}
        assert set(result["co_cited_with"]) == partners
        assert all(f"co-cited with {p} in the corpus" in result["why"] for p in partners)
        said += len(partners)
    assert said >= 2  # at least one co-cited pair among the 100 results, said on both sides
    assert found["cites"] == 2 and len(found["cocited_set"]) == 2


def test_without_a_trained_model_locations_rank_by_the_fused_ranker_own_sentence_first(
        jats_corpus) -> None:
    corpus, encoder, model = jats_corpus
    rows = corpus.connect().execute(
        "SELECT paper_id, title FROM papers WHERE language = 'en' AND length(title) > 40 "
        "ORDER BY paper_id LIMIT 3").fetchall()
    assert len(rows) == 3
    # three sentences, each a paper's title: the middle location's context holds all three
    own = [title.rstrip(".") for _, title in rows]
    contexts = [" ".join(own[max(0, i - 1):i + 2]) for i in range(3)]
    fused = LocationRanking(model, RankWeights(), None, None, "bm25@same")
    found = location_hits(fused, corpus_signals(corpus), encoder, None, own, contexts, [], {}, 3)
    assert [hits[0][0] for hits in found] == [p for p, _ in rows]
    assert all(a[1] >= b[1] for hits in found for a, b in pairwise(hits))
    text = " ".join(f"{title} [{i}]." for i, title in enumerate(own, 1))
    default = _recommend(corpus, text, encoder, model, 3, manuscript_title="")
    assert [loc["ranking"] for loc in default] == ["fused"] * 3
    assert all(len(loc["results"]) == 3 for loc in default)
    dense = _recommend(corpus, text, encoder, model, 3, manuscript_title="",
                                two_stage=False)
    assert [loc["ranking"] for loc in dense] == ["dense"] * 3
