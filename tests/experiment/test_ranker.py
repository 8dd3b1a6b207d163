"""The learned ranker is chosen out of fold, never below its best single member there, and its
relevance is a calibrated probability (synthetic pools and score matrices, seconds)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from openmsd.eval import Pool
from openmsd.experiment.pools import tuning_pool
from openmsd.experiment.ranker import Grid, choose_head
from openmsd.rank import Papers, Queries
from openmsd.rank.calibration import ArtifactError, Calibration
from openmsd.rank.fusion import Fusion, fuse
from openmsd.rank.learned import (
    PAIR_FEATURES,
    LearnedFusion,
    LearnedModel,
    feature_names,
    learned_fusion,
    pair_features,
    weighs,
)
from openmsd.rank.scorer import ExactScorer
from openmsd.rank.tuned_file import RankerEntry


def synthetic(queries: int, papers: int, seed: int, languages: list[str] | None = None
              ) -> tuple[Pool, dict[str, np.ndarray], np.ndarray]:
    """A pool whose query i is linked to papers (i + 1) and (i + 2) mod ``papers``; member
    ``signal`` scores linked papers higher with noise, ``noise`` is noise, and ``cross`` is
    high for linked papers only when they are in another language than the query."""
    rng = np.random.default_rng(seed)
    ids = [f"p{i:03d}" for i in range(papers)]
    languages = languages or [("en", "fr", "pt")[i % 3] for i in range(papers)]
    pairs = [(i, (i + d) % papers) for i in range(queries) for d in (1, 2)]
    judgements = pa.table({"task": ["citation"] * len(pairs),
                           "query": [ids[q] for q, _ in pairs],
                           "doc": [ids[d] for _, d in pairs], "direction": ["x"] * len(pairs)})
    pool = Pool("train", pa.table({"paper_id": ids, "language": languages}), judgements, {})
    linked = np.zeros((papers, papers), bool)
    for q, d in pairs:
        linked[q, d] = True
    signal = rng.normal(0, 1, (papers, papers)) + 1.5 * linked
    noise = rng.normal(0, 1, (papers, papers))
    other = np.array(languages)[None, :] != np.array(languages)[:, None]
    cross = rng.normal(0, 1, (papers, papers)) + 2.0 * (linked & other)
    members = {"signal": signal, "noise": noise, "cross": cross}
    for matrix in members.values():
        np.fill_diagonal(matrix, -np.inf)
    return pool, {m: v.astype(np.float32) for m, v in members.items()}, np.array(languages)


def grid_of(pool: Pool, members: dict[str, np.ndarray], languages: np.ndarray,
            untuned: list[str]) -> Grid:
    """The :class:`Grid` a fit reads of a synthetic pool (every paper a candidate)."""
    tuning = tuning_pool(pool, limit=10_000)
    parts = [m[tuning.rows] for m in members.values()]
    labels = np.zeros(parts[0].shape, np.int32)
    position = {p: i for i, p in enumerate(pool.ids)}
    where = {int(r): i for i, r in enumerate(tuning.rows)}
    for q, d in zip(pool.judgements["query"].to_pylist(), pool.judgements["doc"].to_pylist(),
                    strict=True):
        labels[where[position[q]], position[d]] += 1
    shape = parts[0].shape
    features = pair_features(parts, languages[tuning.rows],
                             np.broadcast_to(languages, shape), np.full(shape, 100.0))
    valid = np.any([np.isfinite(p) for p in parts], axis=0)
    fused = fuse([members[m][tuning.rows] for m in untuned], [1.0] * len(untuned), "zscore")
    return Grid(tuning, parts, labels, valid, features, fused)


def plain(names: list[str]) -> dict:
    """The untuned fusion of ``names``: their z-scores added."""
    return {"members": names, "weights": [1.0] * len(names), "method": "zscore"}


def test_the_learned_ranker_wins_out_of_fold_where_the_evidence_combines():
    pool, members, languages = synthetic(queries=80, papers=100, seed=0)
    grid = grid_of(pool, members, languages, ["signal", "noise"])
    found = choose_head([grid], list(members), "citation", 5, 0, ("linear", "lightgbm"),
                        lambda: None, plain(["signal", "noise"]))
    table = found["out_of_fold_map"]
    assert set(table) == {"signal", "noise", "cross", "untuned", "learned (linear)",
                          "learned (lightgbm)"}
    # signal and the cross-language evidence together beat either alone, out of fold
    assert found["chosen"].startswith("learned")
    assert table[found["chosen"]] > 1.1 * max(table["signal"], table["cross"])
    assert found["gain_over_best_single"] > 1.1 and found["p_against_best_single"] < 0.01
    head = found["head"]
    assert head["members"] == list(members) and head["model"]["kind"] in ("linear", "lightgbm")
    # the calibration is a probability: monotone, in [0, 1], higher for linked pairs
    calibration = Calibration.from_dict(head["calibration"])
    model = LearnedModel.from_dict(head["model"], list(members))
    scores = model.score(grid.features)
    chance = calibration.probability(scores)
    linked, other = chance[grid.labels > 0], chance[(grid.labels == 0) & grid.valid]
    assert linked.mean() > 5 * other.mean()
    # its probabilities add up to the links there are (calibrated, not a share of the best)
    assert chance[grid.valid].sum() == pytest.approx((grid.labels > 0).sum(), rel=0.25)


def test_a_tree_model_says_what_it_weighs():
    """The trees' gain summed per piece of evidence: the signals first, the noise last, all of
    it adding up to one; a linear head says nothing of the kind."""
    pool, members, languages = synthetic(queries=80, papers=100, seed=0)
    grid = grid_of(pool, members, languages, ["signal", "noise"])
    found = choose_head([grid], list(members), "citation", 5, 0, ("lightgbm",), lambda: None,
                        plain(["signal", "noise"]))
    assert found["chosen"] == "learned (lightgbm)"
    weights = weighs(RankerEntry(tuple(members), "model", paper=found["head"]))
    assert weights is not None and sum(weights.values()) == pytest.approx(1.0, abs=0.01)
    assert set(weights) <= {*members, *PAIR_FEATURES}
    assert next(iter(weights)) in ("signal", "cross")
    assert weights["noise"] < min(weights["signal"], weights["cross"])
    linear = {"model": {"kind": "linear", "coef": [1.0]}}
    assert weighs(RankerEntry(tuple(members), "model", paper=linear)) is None


def test_never_below_the_best_single_member_out_of_fold():
    pool, members, languages = synthetic(queries=60, papers=80, seed=3)
    only = {"signal": members["signal"], "noise": members["noise"]}
    grid = grid_of(pool, only, languages, ["noise"])
    found = choose_head([grid], list(only), "citation", 5, 0, ("linear",), lambda: None,
                        plain(["noise"]))
    table = found["out_of_fold_map"]
    assert table[found["chosen"]] >= table["signal"] == max(table["signal"], table["noise"])
    if found["chosen"] in only:  # a single member ships as itself
        assert found["head"]["members"] == [found["chosen"]] and found["head"]["model"] is None
    if found["chosen"].startswith("learned"):  # only where it beats the plain rankers for sure
        assert found["p_learned_against_plain"] < 0.05


class Fixed(ExactScorer):
    """A member with a fixed score matrix over a collection (rows: query rows)."""

    def __init__(self, name: str, papers: Papers, matrix: np.ndarray):
        self.name, self.papers, self.matrix, self.signal = name, papers, matrix, "text"

    def score(self, queries: Queries, candidates: np.ndarray) -> np.ndarray:
        return self.matrix[np.ix_(queries.rows, candidates)]


def test_a_stored_learned_fusion_ranks_and_rates_like_its_model():
    pool, members, languages = synthetic(queries=80, papers=100, seed=0)
    grid = grid_of(pool, members, languages, ["signal"])
    found = choose_head([grid], list(members), "citation", 3, 0, ("linear",), lambda: None,
                        plain(["signal"]))
    papers = Papers(pool.ids, ["x" * 99] * len(pool.ids), list(languages))
    scorers = [Fixed(m, papers, v) for m, v in members.items()]
    spec = {"members": list(members), "method": "model", "paper": found["head"]}
    fusion = learned_fusion("hybrid", scorers, RankerEntry.from_json(spec))
    assert isinstance(fusion, LearnedFusion) and isinstance(fusion, Fusion)
    queries = Queries.of_rows(papers, [0, 5])
    rows, scores = fusion.top_k(queries, 5)
    assert (rows[:, 0] >= 0).all() and (np.diff(scores, axis=1) <= 0).all()
    # the first results are the linked ones
    assert {int(rows[0, 0]), int(rows[0, 1])} <= {1, 2, *rows[0, :5].tolist()}
    chance = fusion.probability(scores[0])
    assert chance is not None and (np.diff(chance) <= 1e-9).all() and 0 <= chance.min() <= 1


@pytest.mark.parametrize("damage, said", [
    (lambda s: s["paper"]["model"].update(coef=[float("nan")] * len(s["paper"]["model"]
                                                                     ["coef"])),
     "not a finite number"),
    (lambda s: s["paper"]["model"].update(kind="forest"), "expected a kind"),
    (lambda s: s["paper"]["model"].update(features=["x"]), "features are not those"),
    (lambda s: s["paper"].update(calibration={"x": [1, 0], "y": [0, 1]}), "must not decrease"),
    (lambda s: s["paper"].update(members=["nobody"]), "not a member"),
    (lambda s: s["paper"].update(model=None, method="bogus", weights=[1.0] * 3),
     "method must be one of"),
    (lambda s: s["paper"].update(model=None, method="zscore", weights=[1.0]),
     "one weight a member"),
])
def test_a_damaged_learned_ranker_is_refused_with_what_is_wrong(damage, said):
    pool, members, languages = synthetic(queries=40, papers=50, seed=1)
    grid = grid_of(pool, members, languages, ["signal"])
    found = choose_head([grid], list(members), "citation", 2, 0, ("linear",), lambda: None,
                        plain(["signal"]))
    head = found["head"]
    if head.get("model") is None:  # a plain ranker won: make a linear head to damage
        names = feature_names(list(members))
        head = {"members": list(members), "calibration": head["calibration"],
                "model": LearnedModel("linear", names, [0.1] * len(names), 0.0,
                                      [0.0] * len(names), [1.0] * len(names)).to_dict()}
    spec = {"members": list(members), "method": "model", "paper": head}
    damage(spec)
    papers = Papers(pool.ids, ["x"] * len(pool.ids), list(languages))
    with pytest.raises(ArtifactError, match=said):
        learned_fusion("hybrid", [Fixed(m, papers, v) for m, v in members.items()],
                       RankerEntry.from_json(spec))


def test_the_untuned_fusion_ships_as_a_head_where_nothing_learned_is_surely_better():
    pool, members, languages = synthetic(queries=40, papers=50, seed=2)
    papers = Papers(pool.ids, ["x"] * len(pool.ids), list(languages))
    scorers = [Fixed(m, papers, v) for m, v in members.items()]
    head = {"members": ["signal", "cross"], "model": None, "method": "zscore",
            "weights": [1.0, 1.0], "calibration": {"x": [-3.0, 3.0], "y": [0.0, 0.5]}}
    fusion = learned_fusion("hybrid", scorers, RankerEntry(tuple(members), "model", paper=head))
    queries = Queries.of_rows(papers, [0])
    candidates = np.arange(1, len(pool.ids))
    expected = fuse([members["signal"][[0]][:, candidates], members["cross"][[0]][:, candidates]],
                    [1.0, 1.0], "zscore")
    assert np.allclose(fusion.score(queries, candidates), expected)
