"""The learned fusion, pseudo-relevance feedback, text carried over links and the metadata
scorers."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pytest

from openmsd.experiment.weights import Judged
from openmsd.rank import Fusion, Papers, Queries, UnknownScorerError, features, load_scorer
from openmsd.rank.metadata import AuthorScorer

from .test_scorers import CITATIONS, PAPERS

TOPICS = ["apple", "river", "mountain", "violin", "planet", "garden", "castle", "forest"]


def planted() -> tuple[Papers, list[list[str]]]:
    """Per topic a query, a decoy sharing more of its words, and the relevant paper sharing
    fewer words but an author with the query."""
    ids, texts, authors = [], [], []
    for i, topic in enumerate(TOPICS):
        ids += [f"q{i}", f"d{i}", f"r{i}"]
        texts += [f"{topic} harvest season report", f"{topic} harvest season report notes",
                  f"{topic} harvest"]
        authors += [[f"Author {i}"], [f"Other {i}"], [f"Author {i}", "Someone"]]
    return Papers(ids, texts, ["en"] * len(ids)), authors


def logistic_weights(parts: list[np.ndarray], queries: list[int], relevant: list[int]
                     ) -> list[float]:
    """The ``learned`` method's weights: a logistic regression of "relevant to the query" on
    the members' :func:`openmsd.rank.features` over every other paper of ``queries`` (classes
    balanced), as a fusion of that method reads them."""
    from sklearn.linear_model import LogisticRegression

    found = features([p[queries] for p in parts])
    labels = np.zeros(found[0].shape, bool)
    labels[np.arange(len(queries)), relevant] = True
    other = np.ones(labels.shape, bool)
    other[np.arange(len(queries)), queries] = False  # never the query paper itself
    model = LogisticRegression(class_weight="balanced", max_iter=2000, random_state=0)
    model.fit(np.stack([f[other] for f in found], axis=1), labels[other])
    return [float(w) for w in model.coef_[0]]


def test_learned_fusion_puts_the_planted_paper_above_bm25s_choice():
    papers, authors = planted()
    members = [load_scorer("bm25", papers), AuthorScorer(papers, authors)]
    everything = np.arange(len(papers))
    queries = Queries.of_rows(papers, everything)
    parts = []
    for member in members:
        matrix = np.array(member.score(queries, everything), np.float32)
        np.fill_diagonal(matrix, -np.inf)
        parts.append(matrix)
    train = [f"q{i}" for i in range(5)]  # fitted on five topics, checked on the other three
    pool = SimpleNamespace(ids=papers.ids, judgements=pa.table(
        {"task": ["citation"] * len(train), "query": train,
         "doc": [q.replace("q", "r") for q in train]}))
    weights = logistic_weights(parts, [papers.position[q] for q in train],
                               [papers.position[q.replace("q", "r")] for q in train])
    assert len(weights) == 3 * len(members)
    fused = Fusion("learned", members, weights, "learned")
    held_out = Queries.of_rows(papers, [papers.position[f"q{i}"] for i in (5, 6, 7)])
    bm25_first = members[0].top_k(held_out, 1)[0][:, 0]
    fused_first = fused.top_k(held_out, 1)[0][:, 0]
    assert [papers.ids[r] for r in bm25_first] == ["d5", "d6", "d7"]
    assert [papers.ids[r] for r in fused_first] == ["r5", "r6", "r7"]
    judged = Judged(pool, None)
    assert judged.objective(parts[0]) == pytest.approx(50.0)  # the decoy first, then it
    with pytest.raises(ValueError, match="expected 6"):
        Fusion("bad", members, [1.0, 1.0], "learned")


def test_feedback_and_text_carried_over_links():
    small = Papers(["a", "b", "c"], ["graph neural parsing", "graph neural parsing syntax",
                                     "syntax trees treebank"], ["en"] * 3)
    query = Queries.of_texts(["neural parsing"], ["en"])
    plain = load_scorer("bm25", small).score(query, np.arange(3))[0]
    fed = load_scorer("bm25~prf", small).score(query, np.arange(3))[0]
    # c shares no word with the query, but "syntax" with b, which the query finds first
    assert not np.isfinite(plain[2]) and np.isfinite(fed[2]) and fed[2] < fed[1]
    query = Queries.of_texts(["protein folding"], ["en"])  # en1's words only
    everything = np.arange(len(PAPERS))
    links = load_scorer("bm25~links", PAPERS, citations=CITATIONS)
    assert links.signal == "graph"
    carried = links.score(query, everything)[0]
    # en1 reads like the query and cites fr1 and fr3: they get its score, fr2 (not linked to
    # en1) none
    assert np.isfinite(carried[[0, 4]]).all() and not np.isfinite(carried[1])
    hidden = load_scorer("bm25~links", PAPERS, citations=CITATIONS, hidden=[("fr1", "en1")])
    assert not np.isfinite(hidden.score(query, everything)[0][0])
    assert np.isfinite(hidden.score(query, everything)[0][4])
    with pytest.raises(UnknownScorerError, match="needs a corpus"):
        load_scorer("authors", PAPERS)
