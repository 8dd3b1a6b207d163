"""Author citation habits: what a query's authors' other papers link to, the author–author
citation graph, PageRank over papers and authors, popularity; hidden links stay hidden."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from openmsd.rank import Papers, Queries, UnknownScorerError, load_scorer
from openmsd.rank.authorship import AUTHOR_SCORERS, AuthorshipScorer

#: The collection: q (the query), x, y, z; p is a corpus paper outside it (another paper of
#: q's author Ana), as the papers of the other splits are for an evaluation pool.
PAPERS = Papers(["q", "x", "y", "z"], ["query", "cited by Ana's other paper", "unrelated",
                                       "by Cy"], ["fr"] * 4)
AUTHORS = {"q": ["Ana Pérez"], "p": ["ana perez", "Bo Li"], "x": ["Cy Ng"], "y": ["Di Wu"],
           "z": ["Cy Ng"]}
#: p cites x (Ana's habit), q cites x (the link an evaluation hides), y cites z
CITATIONS = pa.table({"citing_id": ["p", "q", "y"], "cited_id": ["x", "x", "z"]})
QUERY = Queries.of_rows(PAPERS, [0])
EVERYTHING = np.arange(4)


def scores(kind: str, citations: pa.Table = CITATIONS,
           hidden: list[tuple[str, str]] | None = None) -> np.ndarray:
    scorer = AuthorshipScorer(PAPERS, kind, AUTHORS, citations, hidden or [])
    return scorer.score(QUERY, EVERYTHING)[0]


def test_author_links_reach_what_the_authors_other_papers_cite():
    found = scores("author-links")
    assert found[1] == pytest.approx(1 / np.log(4))  # x, through p (Ana signed 2 papers)
    assert not np.isfinite(found[[0, 2, 3]]).any()  # itself; y and z: no author's link
    # the query's own link is not a habit of its authors: without p, x has no evidence
    alone = AuthorshipScorer(PAPERS, "author-links", {k: v for k, v in AUTHORS.items()
                                                      if k != "p"}, CITATIONS)
    assert not np.isfinite(alone.score(QUERY, EVERYTHING)[0][1])
    said = AuthorshipScorer(PAPERS, "author-links", AUTHORS, CITATIONS).describe(0, EVERYTHING)
    assert said == [None, "linked to 1 other paper of the same authors", None, None]


def test_author_citations_and_ppr_reach_the_cited_authors_other_papers():
    found = scores("author-citations")
    # Ana's papers link twice to Cy's (p → x, q → x): x and z, both by Cy, are reached
    assert found[1] == found[3] > 0 and not np.isfinite(found[2])
    ranked = scores("author-ppr")
    assert ranked[1] > ranked[3] > 0 and not np.isfinite(ranked[0])
    popular = scores("cited-by")
    assert popular[1] == pytest.approx(np.log(3)) and popular[3] == pytest.approx(np.log(2))
    assert not np.isfinite(popular[2])  # never cited: no evidence


@pytest.mark.parametrize("kind", AUTHOR_SCORERS)
def test_hidden_links_are_left_out_of_every_count(kind):
    without = pa.table({"citing_id": ["p", "y"], "cited_id": ["x", "z"]})
    hidden = scores(kind, hidden=[("x", "q")])
    np.testing.assert_array_equal(hidden, scores(kind, without))
    if kind != "author-links":  # the hidden link counted would change the scores
        assert not np.array_equal(hidden, scores(kind), equal_nan=True)


def test_free_text_unknown_kinds_and_no_corpus():
    text = Queries.of_texts(["anything"], ["en"])
    assert not np.isfinite(AuthorshipScorer(PAPERS, "cited-by", AUTHORS, CITATIONS)
                           .score(text, EVERYTHING)).any()
    with pytest.raises(ValueError, match="author-links, author-citations"):
        AuthorshipScorer(PAPERS, "author-rank", AUTHORS, CITATIONS)
    with pytest.raises(UnknownScorerError, match="needs a corpus"):
        load_scorer("author-ppr", PAPERS, citations=CITATIONS)


def test_scorers_of_one_graph_share_it_and_other_hidden_links_build_their_own():
    first = AuthorshipScorer(PAPERS, "author-links", AUTHORS, CITATIONS)
    for kind in AUTHOR_SCORERS:
        shared = AuthorshipScorer(PAPERS, kind, AUTHORS, CITATIONS, like=first)
        assert shared.signed is first.signed and shared.undirected is first.undirected
        np.testing.assert_array_equal(shared.score(QUERY, EVERYTHING)[0], scores(kind))
    hiding = AuthorshipScorer(PAPERS, "author-links", AUTHORS, CITATIONS, [("q", "x")],
                              like=first)
    assert hiding.undirected is not first.undirected
    np.testing.assert_array_equal(hiding.score(QUERY, EVERYTHING)[0],
                                  scores("author-links", hidden=[("q", "x")]))
