"""Free text as tuning data: the citation contexts of the train and dev papers, and
``hybrid``'s fallback for free text (``search``, a citation context: no authors, no year)
**chosen by cross-validation** among a few procedures rather than fitted.

A few dozen one-sentence queries are too few to fit several weights that transfer: on TALN a
weighting fitted on 54 contexts scored 25.2 on them against BM25's 22.7, and 11.7 against
15.5 on the 18 test contexts (docs/ranking.md). So each candidate
:class:`Procedure` is scored **out of fold** (k folds of the contexts, grouped by citing
paper, seeded): a *simple* one (nothing fitted on the contexts: the untuned default, the
z-score fusion of ``bm25@same`` and the dense model; the dense model alone; the fallback
fitted on the SDSM paper queries) scores the held-out contexts as they are, a *fitted* one
(:func:`search` over its members) is fitted on the other folds first. A fitted procedure is
kept only when it beats the best simple one out of fold by :data:`MARGIN` MAP points or
more **and** a paired t-test on the per-context AP gives p < :data:`ALPHA`; it is then fitted
again on every context. Otherwise the best simple procedure is kept.

**Cross-lingual reach.** A French query must still find English papers, where every BM25
view within a language is silent. When the members hold the corpus's dense model, every
candidate holds it (the dense model itself or its ``~prf``), and a fitted one gives it at
least :data:`MIN_DENSE` of the weight; a lexical member alone is reported, never chosen.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pyarrow as pa

from openmsd.corpus import Corpus
from openmsd.experiment.weights import Judged, TuneError, grid_step, search
from openmsd.rank import (
    HYBRID,
    UNTUNED_METHODS,
    Papers,
    Queries,
    RankerSpec,
    corpus_papers,
    default_dense,
    fuse,
    load_scorer,
)

__all__ = ["ALPHA", "FOLDS", "MARGIN", "MIN_CONTEXTS", "MIN_DENSE", "Procedure",
           "TooFewContexts", "choose", "citation_contexts", "fit_contexts", "folds_of",
           "procedures"]

#: The fewest train + dev citation contexts the free-text fallback is chosen on.
MIN_CONTEXTS = 20
#: Folds of the cross-validation (fewer when there are fewer citing papers).
FOLDS = 5
#: How many MAP points (%) a fitted procedure must gain out of fold over the best simple one.
MARGIN = 1.0
#: The p-value under which the paired t-test must put that gain.
ALPHA = 0.05
#: The least share of a fitted weighting the dense model keeps (cross-lingual reach).
MIN_DENSE = 0.2


class TooFewContexts(TuneError):
    """Fewer than :data:`MIN_CONTEXTS` tuning contexts: the free-text fallback is not chosen."""


def citation_contexts(corpus: Corpus, papers: Papers, splits: Sequence[str] | None = None
                      ) -> pa.Table:
    """The citation contexts of ``corpus`` whose reference resolved to a paper of the
    collection ``papers``: a table of ``citing_id``, ``text``, ``cited_id`` in a stable order;
    with ``splits``, only those of the citing papers of these relation splits (empty when the
    corpus has no contexts)."""
    from openmsd.relations import RelationsError, read_split  # lazy: loads pandas (~1.4 s)

    schema = pa.schema([("citing_id", pa.string()), ("text", pa.string()),
                        ("cited_id", pa.string())])
    con = corpus.connect()
    if "contexts" not in {row[0] for row in con.execute("SHOW TABLES").fetchall()}:
        return schema.empty_table()
    rows = con.execute("SELECT citing_id, text, cited_id FROM contexts WHERE cited_id IS NOT "
                       "NULL AND text IS NOT NULL ORDER BY citing_id, position, cited_id"
                       ).fetchall()
    citing: set[str] | None = None
    if splits is not None:
        citing = set()
        for split in splits:
            try:
                citing |= set(read_split(corpus, split)["paper_id"].to_pylist())
            except RelationsError:
                continue
    kept = [row for row in rows
            if row[2] in papers.position and (citing is None or row[0] in citing)]
    return pa.Table.from_pylist([dict(zip(schema.names, row, strict=True)) for row in kept],
                                schema)


@dataclass(frozen=True)
class Procedure:
    """A way to get a fallback from tuning contexts: fixed ``weights`` of ``members``
    (*simple*: nothing fitted on the contexts), or ``weights`` None: a weighting of
    ``members`` fitted (:func:`search`) on the contexts it is given."""

    name: str
    members: tuple[str, ...]
    weights: tuple[float, ...] | None = None
    method: str = "rrf"

    @property
    def simple(self) -> bool:
        """Whether nothing of it is fitted on contexts."""
        return self.weights is not None


def procedures(members: Sequence[str], dense: str | None,
               paper_fit: dict[str, Any] | None = None) -> list[Procedure]:
    """The candidates for the fallback over ``members``: the untuned default of a corpus in
    one language (the z-score fusion of ``bm25@same`` and ``dense``), ``dense`` alone,
    ``paper_fit`` (a spec fitted on paper queries, when its members are among ``members``),
    then the fitted ones: the pair ``bm25@same`` + ``dense``, and every member. With no
    ``dense`` among ``members``, each member alone takes the place of the first two.

    >>> [p.name for p in procedures(["bm25@same", "bm25-en", "e5"], "e5")]
    ['default', 'e5', 'pair, fitted', 'all members, fitted']
    """
    out = []
    has_dense = dense is not None and dense in members
    if has_dense and "bm25@same" in members:
        out.append(Procedure("default", ("bm25@same", dense), (1.0, 1.0),
                             UNTUNED_METHODS[HYBRID]))
    if has_dense:
        out.append(Procedure(dense, (dense,), (1.0,)))
    else:
        out += [Procedure(m, (m,), (1.0,)) for m in members]
    if paper_fit and set(paper_fit["members"]) <= set(members):
        out.append(Procedure("paper queries", tuple(paper_fit["members"]),
                             tuple(paper_fit["weights"]), paper_fit["method"]))
    if has_dense and "bm25@same" in members:
        out.append(Procedure("pair, fitted", ("bm25@same", dense)))
    if len(members) > 1:
        out.append(Procedure("all members, fitted", tuple(members)))
    return out


def _speaks(member: str, dense: str | None) -> bool:
    """Whether ``member`` ranks by the dense model's vectors (it, or its ``~prf``)."""
    if dense is None:
        return False
    model = RankerSpec.parse(dense)
    return RankerSpec.parse(member) in (model, replace(model, modifiers=("prf",)))


def folds_of(groups: Sequence[str], folds: int = FOLDS, seed: int = 0) -> list[np.ndarray]:
    """The held-out rows of each of ``folds`` folds: the distinct ``groups`` (citing papers)
    in a seeded random order dealt in turn to the folds, so that no citing paper is on both
    sides; each row its own group when there are fewer groups than folds.

    >>> [f.tolist() for f in folds_of(["a", "a", "b", "c"], folds=3, seed=0)]
    [[3], [0, 1], [2]]
    """
    names, keys = np.unique(np.asarray(list(groups), dtype=str), return_inverse=True)
    if len(names) < folds:
        keys = np.arange(len(groups))
    count = int(keys.max()) + 1 if len(keys) else 0
    order = np.random.default_rng(seed).permutation(count)
    fold_of = np.empty(count, np.int64)
    fold_of[order] = np.arange(count) % min(folds, max(count, 1))
    return [np.flatnonzero(fold_of[keys] == f) for f in range(min(folds, count))]


def _weighting(procedure: Procedure, rows: dict[str, np.ndarray], cited: np.ndarray,
               step: float, dense: str | None) -> dict[str, Any]:
    """The spec (``members``, ``weights``, ``method``) a procedure gives on these contexts
    (``rows``: each member's contexts × documents scores; ``cited``: each context's
    document): its own weights, or the best weighting :func:`search` finds (the dense model's
    share at least :data:`MIN_DENSE` where it is a member)."""
    if procedure.simple:
        return {"members": list(procedure.members), "weights": list(procedure.weights or ()),
                "method": procedure.method}
    members = list(procedure.members)
    speaks = [i for i, m in enumerate(members) if _speaks(m, dense)]

    def allowed(weights: Sequence[float]) -> bool:
        total = sum(weights)
        return not speaks or (total > 0 and sum(weights[i] for i in speaks) >= MIN_DENSE
                              * total - 1e-9)

    judged = Judged.of_pairs(np.arange(len(cited)), cited)
    best = search([[rows[m] for m in members]], [judged], np.ones(1), members,
                  grid_step(len(members), step), allowed=allowed)
    kept = [i for i, w in enumerate(best["weights"]) if w > 0]
    return {"members": [members[i] for i in kept],
            "weights": [best["weights"][i] for i in kept], "method": best["method"]}


def _average_precision(spec: dict[str, Any], rows: dict[str, np.ndarray], cited: np.ndarray
                       ) -> np.ndarray:
    """Each context's AP when ranked by ``spec`` (a fraction)."""
    fused = fuse([rows[m] for m in spec["members"]], spec["weights"], spec["method"])
    return Judged.of_pairs(np.arange(len(cited)), cited).average_precision(fused)


def choose(rows: dict[str, np.ndarray], cited: Sequence[int], groups: Sequence[str],
           candidates: Sequence[Procedure], dense: str | None, step: float = 0.1,
           folds: int = FOLDS, seed: int = 0,
           progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """The fallback chosen among ``candidates`` by cross-validation (see the module):
    ``rows`` holds each member's scores (contexts × documents), ``cited`` each context's
    relevant document (column), ``groups`` its citing paper. Returns the spec (``members``,
    ``weights``, ``method``; a fitted procedure fitted again on every context), ``chosen``
    and ``cross_validation`` (the out-of-fold MAP % of every candidate, which were eligible,
    the fitted-against-simple comparison and the rule)."""
    cited = np.asarray(cited, np.int64)
    held = folds_of(groups, folds, seed)
    eligible = [p for p in candidates
                if dense is None or dense not in rows or any(_speaks(m, dense)
                                                             for m in p.members)]
    if not eligible:
        raise TuneError("no candidate for the free-text fallback holds the dense model "
                        f"{dense}")
    out_of_fold: dict[str, np.ndarray] = {}
    for procedure in candidates:
        ap = np.zeros(len(cited))
        for test in held:
            train = np.setdiff1d(np.arange(len(cited)), test)
            spec = _weighting(procedure, {m: r[train] for m, r in rows.items()}, cited[train],
                              step, dense)
            ap[test] = _average_precision(spec, {m: r[test] for m, r in rows.items()},
                                          cited[test])
            if progress:
                progress(1)
        out_of_fold[procedure.name] = ap
    mean = {name: 100 * float(ap.mean()) for name, ap in out_of_fold.items()}
    simple = [p for p in eligible if p.simple]
    fitted = [p for p in eligible if not p.simple]
    best_simple = max(simple, key=lambda p: mean[p.name]) if simple else None
    best_fitted = max(fitted, key=lambda p: mean[p.name]) if fitted else None
    chosen = best_simple or best_fitted
    comparison: dict[str, Any] = {}
    if best_simple and best_fitted:
        from scipy import stats  # lazy: scipy takes ~0.2 s to import

        gain = mean[best_fitted.name] - mean[best_simple.name]
        test = stats.ttest_rel(out_of_fold[best_fitted.name], out_of_fold[best_simple.name])
        p = float(test.pvalue) if math.isfinite(test.pvalue) else 1.0
        comparison = {"fitted": best_fitted.name, "simple": best_simple.name,
                      "gain": round(gain, 4), "p": round(p, 4)}
        if gain >= MARGIN and p < ALPHA:
            chosen = best_fitted
    assert chosen is not None
    spec = _weighting(chosen, rows, cited, step, dense)
    return {**spec, "chosen": chosen.name, "cross_validation": {
        "folds": len(held), "seed": seed, "grouped_by": "citing paper",
        "contexts": len(cited),
        "out_of_fold_map": {name: round(value, 4) for name, value in mean.items()},
        "eligible": [p.name for p in eligible], "fitted_against_simple": comparison,
        "rule": f"a fitted weighting is kept only when it beats the best simple candidate "
                f"(nothing fitted on contexts) out of fold by >= {MARGIN:g} MAP points and a "
                f"paired t-test on per-context AP gives p < {ALPHA:g}; every candidate holds "
                f"the dense model (a fitted one gives it >= {MIN_DENSE:g} of the weight)"}}


def fit_contexts(corpus: Corpus, members: Sequence[str], step: float, seed: int = 0,
                 paper_fit: dict[str, Any] | None = None,
                 progress: Callable[[str, int], Callable[[int], None]] | None = None
                 ) -> dict[str, Any]:
    """The free-text fallback of ``hybrid`` over the words and vectors ``members``, chosen
    (:func:`choose`) on the citation contexts of the train and dev papers, each ranking every
    corpus paper with text (MAP of the cited paper); ``paper_fit``: the fallback fitted on
    paper queries, one of the candidates. :class:`TooFewContexts` under
    :data:`MIN_CONTEXTS` contexts."""
    every = corpus_papers(corpus)
    papers = corpus_papers(corpus, [i for i, t in zip(every.ids, every.texts, strict=True) if t])
    contexts = citation_contexts(corpus, papers, ("train", "dev"))
    if contexts.num_rows < MIN_CONTEXTS:
        raise TooFewContexts(
            f"{corpus.root}: {contexts.num_rows} citation contexts of the train and dev papers "
            f"cite a corpus paper; the free-text fallback is chosen on {MIN_CONTEXTS} or more: "
            "not chosen")
    texts = contexts["text"].to_pylist()
    queries, everything, cache = Queries.of_texts(texts), np.arange(len(papers)), {}
    rows = {m: np.array(load_scorer(m, papers, cache=cache).score(queries, everything),
                        np.float32) for m in members}
    cited = np.array([papers.position[c] for c in contexts["cited_id"].to_pylist()], np.int64)
    dense = str(RankerSpec.parse(default_dense(corpus)))  # as the members spell it
    candidates = procedures(members, dense, paper_fit)
    chosen = choose(rows, cited, contexts["citing_id"].to_pylist(), candidates, dense, step,
                    seed=seed, progress=progress(
                        "hybrid's fallback (train+dev citation contexts, cross-validated)",
                        len(candidates) * FOLDS) if progress else None)
    judged = Judged.of_pairs(np.arange(len(texts)), cited)
    return {**chosen,
            "objective_value": round(judged.objective(fuse(
                [rows[m] for m in chosen["members"]], chosen["weights"], chosen["method"])), 4),
            "fitted_on": f"{len(texts)} citation contexts of the train and dev papers (MAP %), "
                         f"chosen by {chosen['cross_validation']['folds']}-fold "
                         "cross-validation",
            "fitted": datetime.now(UTC).isoformat(timespec="seconds"),
            "single_values": {m: round(judged.objective(r), 4) for m, r in rows.items()}}
