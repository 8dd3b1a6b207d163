"""The second stage's learned fusion: the prefetch's top candidates reranked by a logistic
regression over rank features.

What the rerank stage knows that the prefetch (BM25 + dense over the fundamental context) does
not: the **whole manuscript** (the model's manuscript encoder over the finished content before
the location, :meth:`~openmsd.models.citrec.model.HierarchicalEncoder.profile`) and the
location's **own sentence** alone (the prefetch's two members on it). Each signal is a score
matrix (queries × candidates); within each query's prefetched candidates a signal becomes its
z-score, the prefetch its log rank, and :class:`RerankFusion` weighs them (fitted by
``train citrec`` on training locations, class-balanced, L2-regularised: scikit-learn's
``LogisticRegression``; the fitted weights are the model's :class:`~openmsd.models.RerankFusion`).

>>> prefetch = np.array([[3.0, 2.0, 1.0, 0.0]])
>>> manuscript = np.array([[0.0, 0.1, 0.9, 0.2]])
>>> fusion = RerankFusion(("prefetch", "manuscript"), (0.1, 1.0))
>>> rerank_rows(prefetch, {"manuscript": manuscript}, fusion, depth=3).argmax(1).tolist()
[2]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from openmsd.models import PREFETCH, RerankFusion, finished_content
from openmsd.rank.citrec.contexts import PaperContexts
from openmsd.rank.citrec.data import Location

if TYPE_CHECKING:
    from openmsd.models import CitrecModel

__all__ = [
    "LANGUAGE_PAIR",
    "NONNEGATIVE",
    "PREFETCH_DEPTH",
    "RERANK_FEATURES",
    "candidate_features",
    "fit_fusion",
    "profile_scores",
    "rerank_hits",
    "rerank_rows",
    "top_candidates",
]

PREFETCH_DEPTH = 200
"""How many of the prefetch's candidates the second stage reorders (training, `eval citrec`,
`recommend`)."""
RERANK_FEATURES = (PREFETCH, "manuscript", "sentence_bm25", "sentence_dense", "popularity",
            "sentence_en", "fundamental_en")
"""The features of the shipped fusion (chosen by grouped cross-validation on the training and
dev citing papers, ``benchmarks/citrec_rerank_cv.py``, docs/citrec.md):
the prefetch's rank, the model's cosine of the whole finished manuscript with the candidate,
BM25 and the dense model on the location's own sentence alone, and the candidate's popularity
in the corpus's citation graph (log 1 + its in-degree among the citing papers the location may
see, :mod:`openmsd.rank.citrec.graph`; zero where the corpus has no links), and the
English-only ``minilm-en`` on the own sentence and on the fundamental context, heard only where
the location and the candidate are both English (zero elsewhere)."""
NONNEGATIVE = ("popularity", "neighbours", "cocited")
"""Features whose weight may only be ≥ 0 (:func:`fit_fusion` leaves one out, weight 0, when
its fit is negative): the citation graph may raise a candidate, never lower it. A negative
weight learns how an evaluation's candidate pool was built (with outside references each
candidate is one citing paper's reference, so "cited by another paper" means "not by this
one"), which no corpus a user ranks shares."""


LANGUAGE_PAIR = ("sentence_en", "fundamental_en")
"""Features heard only for some language pairs (``minilm-en@en``: English-English): a pair
they do not hear is neutral (z-score 0), not a low score."""


def top_candidates(prefetch: np.ndarray, depth: int) -> list[np.ndarray]:
    """For each row of ``prefetch`` (queries × candidates, −inf: not allowed), the columns of
    its best ``depth`` allowed candidates, best first."""
    out = []
    for row in prefetch:
        top = np.argsort(-row, kind="stable")[:depth]
        out.append(top[np.isfinite(row[top])])
    return out


def candidate_features(names: Sequence[str], row: int, columns: np.ndarray,
                       signals: Mapping[str, np.ndarray]) -> np.ndarray:
    """(len(columns), len(names)) features of query ``row``'s prefetched ``columns`` (in the
    prefetch's order): the prefetch's −log rank, each other signal's z-score among them. A
    non-finite score of a :data:`LANGUAGE_PAIR` feature is a pair it does not speak for
    (``minilm-en@en`` on a pair that is not English-English): z-score 0, the others z-scored
    among themselves; of any other feature it is no evidence (BM25 without a shared word):
    score 0, z-scored with the rest."""
    if not len(columns):
        return np.zeros((0, len(names)))
    values = []
    for name in names:
        if name == PREFETCH:
            values.append(-np.log(np.arange(1, len(columns) + 1, dtype=np.float64)))
            continue
        if name not in signals:
            raise KeyError(f"rerank: no {name!r} scores given (have {', '.join(signals)})")
        score = np.asarray(signals[name][row, columns], np.float64)
        if name not in LANGUAGE_PAIR:
            score = np.nan_to_num(score, nan=0.0, posinf=0.0, neginf=0.0)
        heard = np.isfinite(score)
        z = np.zeros(len(columns))
        if heard.any():
            known = score[heard]
            z[heard] = (known - known.mean()) / (known.std() + 1e-9)
        values.append(z)
    return np.stack(values, 1) if values else np.zeros((len(columns), 0))


def rerank_rows(prefetch: np.ndarray, signals: Mapping[str, np.ndarray], fusion: RerankFusion,
                depth: int = PREFETCH_DEPTH) -> np.ndarray:
    """The two-stage score matrix: each query's prefetched ``depth`` candidates ordered by
    ``fusion`` (above all others), the rest in the prefetch's order; −inf stays −inf."""
    out = np.array(prefetch, np.float64, copy=True)
    for i, columns in enumerate(top_candidates(prefetch, depth)):
        if len(columns):
            features = candidate_features(fusion.features, i, columns, signals)
            out[i, columns] = 1e6 + fusion.score(features)
    return out


def fit_fusion(prefetch: np.ndarray, signals: Mapping[str, np.ndarray],
               relevant: Sequence[Sequence[int]], names: Sequence[str] = RERANK_FEATURES,
               depth: int = PREFETCH_DEPTH, regularisation: float = 1.0,
               nonnegative: Sequence[str] = NONNEGATIVE) -> RerankFusion:
    """Fit the weights on training queries: ``relevant`` holds each query's relevant columns;
    a logistic regression (class-balanced, ``C = regularisation``) of "cited" on the features
    of each query's prefetched candidates, refitted without each ``nonnegative`` feature
    whose weight came out negative (it keeps weight 0). ValueError when no relevant candidate
    was prefetched (nothing to learn from)."""
    # optional: the models extra; sklearn takes ~1.6 s to import
    from sklearn.linear_model import LogisticRegression

    rows, labels = [], []
    for i, columns in enumerate(top_candidates(prefetch, depth)):
        rows.append(candidate_features(names, i, columns, signals))
        labels.append(np.isin(columns, list(relevant[i])))
    y = np.concatenate(labels) if labels else np.zeros(0, bool)
    if not y.any() or y.all():
        raise ValueError(f"rerank: {int(y.sum())} of {len(y)} prefetched training candidates "
                         "are cited: a fusion needs both kinds")
    x = np.vstack(rows)
    kept = list(range(len(names)))
    while True:
        model = LogisticRegression(C=regularisation, max_iter=3000, class_weight="balanced")
        model.fit(x[:, kept], y)
        weights = dict(zip(kept, (float(c) for c in model.coef_[0]), strict=True))
        wrong = [j for j in kept if names[j] in nonnegative and weights[j] < 0]
        if not wrong:
            break
        kept.remove(min(wrong, key=lambda j: weights[j]))
    return RerankFusion(tuple(names), tuple(weights.get(j, 0.0) for j in range(len(names))))


def profile_scores(model: CitrecModel, locations: list[Location], candidates: list[str],
                   contexts: PaperContexts, mask: np.ndarray | None = None,
                   batch_size: int = 16) -> np.ndarray:
    """Cosine scores (queries × candidates) of each location's whole finished manuscript
    (:func:`~openmsd.models.citrec.context.finished_content`, the manuscript encoder's
    :meth:`~openmsd.models.citrec.model.HierarchicalEncoder.profile`) with each candidate's
    citation vector: the rerank stage's ``manuscript`` feature; masked pairs −inf."""
    import torch  # optional: the models extra; torch takes ~2.8 s to import

    settings = model.settings
    texts = [finished_content(loc.sentences, loc.at) for loc in locations]
    documents = [contexts.context(p, settings.citation_fundamental,
                                  settings.citation_supplemental) for p in candidates]
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        q = torch.cat([model.manuscript.profile(texts[i:i + batch_size])
                       for i in range(0, len(texts), batch_size)]) if texts else None
        d = torch.cat([model.citation(documents[i:i + 64])
                       for i in range(0, len(documents), 64)])
        scores = (np.zeros((0, len(candidates))) if q is None else
                  (torch.nn.functional.normalize(q, dim=-1)
                   @ torch.nn.functional.normalize(d, dim=-1).T).cpu().numpy())
    model.train(was_training)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    return scores


def rerank_hits(prefetched: list[list[str]], features: Mapping[str, list[np.ndarray]],
                cosines: Any, fusion: RerankFusion, k: int,
                graph_rows: Any = None) -> list[list[tuple[str, float]]]:
    """The second stage of one batch of locations: each location's prefetched paper ids (best
    first) ordered by ``fusion`` over the prefetch's rank, the manuscript's cosine with each
    candidate (``cosines(i, ids)``: location ``i``'s whole-manuscript vector against the
    candidates' vectors), the own-sentence and context scores of ``features`` (per feature,
    per location: its scores of the prefetched papers; a feature not given: zeros) and, when
    the fusion weighs the citation graph, ``graph_rows(i, ids)`` (its features,
    :func:`openmsd.rank.citrec.graph.graph_rows`); the best ``k`` as (paper id, fused score).
    """
    out = []
    for i, ids in enumerate(prefetched):
        signals = {"manuscript": cosines(i, ids)[None, :]}
        for feature, rows in features.items():
            row = rows[i] if rows is not None else np.zeros(len(ids))
            signals[feature] = np.asarray(row, float)[None, :]
        if graph_rows is not None:
            signals.update(graph_rows(i, ids))
        scores = candidate_features(fusion.features, 0, np.arange(len(ids)), signals)
        fused = fusion.score(scores)
        order = np.argsort(-fused, kind="stable")[:k]
        out.append([(ids[j], float(fused[j])) for j in order])
    return out
