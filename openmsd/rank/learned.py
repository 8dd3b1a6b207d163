"""A ranker learned from a corpus's own links: a model over every member's evidence for a
(query, candidate) pair, and the probability that the pair is linked.

A :class:`LearnedModel` reads :func:`pair_features` of its members' score matrices — per
member its score, its gap to the query's best score, its reciprocal rank among the candidates
and whether it has a score; per pair whether the two papers are in one language, whether each
is English and how long the candidate's text is — and gives a score: a linear model
(``kind="linear"``, standardised features) or gradient-boosted trees
(``kind="lightgbm"``, LightGBM's lambdarank). A :class:`Calibration` maps a score to the
probability that the pair is linked (isotonic, fitted out of fold by ``openmsd train ranker``).

Every feature is read the same whatever candidates a query has, as long as they hold each
member's best: a score and its gap to the best are the member's own, and a rank counts only
the candidates scored higher.

>>> import numpy as np
>>> parts = [np.array([[0.9, 0.5, -np.inf]], np.float32)]
>>> found = pair_features(parts, ["en"], np.array([["en", "fr", "en"]]), np.array([[10, 10, 0]]))
>>> found.shape, [round(float(v), 3) for v in found[0, 1, :4]]
((1, 3, 8), [0.5, -0.4, 0.5, 1.0])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from openmsd.artifact import ArtifactError
from openmsd.rank.calibration import Calibration, checked_numbers
from openmsd.rank.fusion import METHODS, Fusion, fuse, heard
from openmsd.rank.scorer import Queries, Scorer

if TYPE_CHECKING:
    from openmsd.rank.tuned_file import RankerEntry

__all__ = [
    "KINDS",
    "LEARNED",
    "PAIR_FEATURES",
    "Head",
    "LearnedFusion",
    "LearnedModel",
    "feature_names",
    "head_of",
    "learned_fusion",
    "pair_features",
]

#: The ``method`` of a stored fusion spec whose members a :class:`LearnedModel` combines.
LEARNED = "model"
#: What a learned model can be.
KINDS = ("linear", "lightgbm")
#: Per member, what :func:`pair_features` gives.
MEMBER_FEATURES = ("score", "gap to best", "reciprocal rank", "has score")
#: Per pair, after the members'.
PAIR_FEATURES = ("same language", "query in English", "candidate in English",
                 "candidate text length")


def feature_names(members: Sequence[str]) -> list[str]:
    """The names of :func:`pair_features`' columns for ``members``.

    >>> feature_names(["bm25"])[:2], len(feature_names(["bm25", "e5"]))
    (['bm25: score', 'bm25: gap to best'], 12)
    """
    return [f"{m}: {f}" for m in members for f in MEMBER_FEATURES] + list(PAIR_FEATURES)


def evidence_weights(importance: dict[str, float]) -> dict[str, float]:
    """A tree model's feature importances (shares of its gain) summed per piece of evidence:
    each member's features together, the pair's features as they are; largest first.

    >>> evidence_weights({"bm25: score": 0.3, "e5: score": 0.25, "bm25: reciprocal rank": 0.2,
    ...                   "same language": 0.25})
    {'bm25': 0.5, 'e5': 0.25, 'same language': 0.25}
    """
    total: dict[str, float] = {}
    for name, share in importance.items():
        evidence = name if name in PAIR_FEATURES else name.rsplit(": ", 1)[0]
        total[evidence] = total.get(evidence, 0.0) + float(share)
    return {k: round(v, 4) for k, v in sorted(total.items(), key=lambda item: -item[1])}


def _ranks(scores: np.ndarray) -> np.ndarray:
    """1 + how many finite scores of the row are higher (``inf`` where a score is not finite)."""
    finite = np.isfinite(scores)
    order = np.sort(np.where(finite, -scores, np.inf), axis=1)
    higher = np.stack([np.searchsorted(order[i], -scores[i], side="left")
                       for i in range(len(scores))]) if len(scores) else order
    return np.where(finite, higher + 1.0, np.inf)


def pair_features(parts: Sequence[np.ndarray], query_languages: Sequence[str],
                  candidate_languages: np.ndarray, candidate_lengths: np.ndarray) -> np.ndarray:
    """The features of every (query, candidate) cell: ``parts`` are the members' score
    matrices (queries × candidates, ``-inf``: no score), ``candidate_languages`` and
    ``candidate_lengths`` (characters of text) each a matrix of the same shape. Returns
    queries × candidates × :func:`feature_names` (``nan`` where a member has no score)."""
    columns = []
    for scores in parts:
        scores = np.asarray(scores, np.float64)
        finite = np.isfinite(scores)
        best = np.where(finite, scores, -np.inf).max(axis=1, keepdims=True)
        raw = np.where(finite, scores, np.nan)
        columns += [raw, raw - np.where(np.isfinite(best), best, np.nan),
                    1.0 / _ranks(scores), finite.astype(np.float64)]
    languages = np.asarray(candidate_languages, dtype=object)
    query = np.asarray(query_languages, dtype=object)[:, None]
    columns += [(languages == query).astype(np.float64),
                np.broadcast_to(query == "en", languages.shape).astype(np.float64),
                (languages == "en").astype(np.float64),
                np.log1p(np.asarray(candidate_lengths, np.float64))]
    return np.stack(columns, axis=-1).astype(np.float32)


@dataclass
class LearnedModel:
    """A fitted model over :func:`pair_features`: ``kind`` (:data:`KINDS`), the ``features``
    it was fitted on (names), and its parameters: ``coef``, ``intercept``, ``mean`` and
    ``scale`` (linear: the score is ``coef · (x − mean) / scale + intercept``, a missing value
    read as the mean) or ``booster`` (LightGBM's model text)."""

    kind: str
    features: list[str]
    coef: list[float] | None = None
    intercept: float = 0.0
    mean: list[float] | None = None
    scale: list[float] | None = None
    booster: str | None = None
    importance: dict[str, float] | None = None

    def __post_init__(self) -> None:
        self._loaded: Any = None

    def score(self, features: np.ndarray) -> np.ndarray:
        """The model's score of each row of ``features`` (… × features)."""
        shape = features.shape[:-1]
        flat = features.reshape(-1, features.shape[-1]).astype(np.float64)
        if flat.shape[1] != len(self.features):
            raise ArtifactError(f"the model reads {len(self.features)} features, given "
                                f"{flat.shape[1]}")
        if self.kind == "linear":
            mean, scale = np.array(self.mean), np.array(self.scale)
            standard = np.where(np.isnan(flat), 0.0, (flat - mean) / scale)
            out = standard @ np.array(self.coef) + self.intercept
        else:
            if self._loaded is None:
                import lightgbm  # lazy: lightgbm takes ~2.4 s to import

                self._loaded = lightgbm.Booster(model_str=self.booster)
            out = self._loaded.predict(flat, num_threads=1) if len(flat) else np.zeros(0)
        return np.asarray(out, np.float64).reshape(shape)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "features": self.features}
        if self.kind == "linear":
            out.update(coef=self.coef, intercept=self.intercept, mean=self.mean,
                       scale=self.scale)
        else:
            out["booster"] = self.booster
        if self.importance:
            out["importance"] = self.importance
        return out

    @classmethod
    def from_dict(cls, found: Any, members: Sequence[str]) -> LearnedModel:
        """From its stored form, for a fusion of ``members``; :class:`ArtifactError` when it
        is not one (an unknown kind, features that are not the members', non-finite
        numbers, a booster LightGBM cannot read)."""
        if not isinstance(found, dict) or found.get("kind") not in KINDS:
            raise ArtifactError(f"model: expected a kind among {', '.join(KINDS)}")
        features = found.get("features")
        if features != feature_names(members):
            raise ArtifactError("model: its features are not those of its members")
        if found["kind"] == "linear":
            coef = checked_numbers(found.get("coef"), "model coef")
            mean = checked_numbers(found.get("mean"), "model mean")
            scale = checked_numbers(found.get("scale"), "model scale")
            intercept = checked_numbers([found.get("intercept")], "model intercept")[0]
            if not len(coef) == len(mean) == len(scale) == len(features):
                raise ArtifactError("model: coef, mean and scale must have one value a feature")
            if any(s <= 0 for s in scale):
                raise ArtifactError("model scale: values must be positive")
            return cls("linear", features, coef, intercept, mean, scale)
        booster = found.get("booster")
        if not isinstance(booster, str) or not booster.startswith("tree"):
            raise ArtifactError("model booster: expected LightGBM's model text")
        model = cls("lightgbm", features, booster=booster,
                    importance=found.get("importance"))
        try:
            import lightgbm  # lazy: lightgbm takes ~2.4 s to import

            model._loaded = lightgbm.Booster(model_str=booster)
        except Exception as error:  # LightGBM raises its own error type for a bad model
            raise ArtifactError(f"model booster: LightGBM cannot read it ({error})") from None
        if model._loaded.num_feature() != len(features):
            raise ArtifactError("model booster: its features are not its members'")
        return model


@dataclass(frozen=True)
class Head:
    """How a fusion scores a pair, over some of its members (indices): a learned ``model``,
    or, without one, the members' ``weights`` fused by ``method`` (the untuned fusion's
    way, :func:`openmsd.rank.fusion.fuse`), or the one member's own score; with the
    calibration of its scores."""

    members: tuple[int, ...]
    model: LearnedModel | None
    calibration: Calibration | None = None
    method: str | None = None
    weights: tuple[float, ...] = ()

    def score(self, parts: Sequence[np.ndarray], query_languages: np.ndarray,
              languages: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """The head's scores of its members' matrices ``parts`` (queries × candidates)."""
        if self.model is not None:
            return self.model.score(pair_features(parts, query_languages, languages, lengths))
        if self.method is not None:
            return np.asarray(fuse(parts, self.weights, self.method), np.float64)
        return np.asarray(parts[0], np.float64)


class LearnedFusion(Fusion):
    """A fusion whose members' evidence is combined by a learned model (:class:`Head`): a
    query paper's by ``paper``, a free text's by ``free_text`` (over the members a free text
    has: no metadata, no graph), or ``paper`` where there is none. Candidates, exact scores
    and what each member said are a :class:`~openmsd.rank.fusion.Fusion`'s."""

    def __init__(self, name: str, members: Sequence[Scorer], paper: Head,
                 free_text: Head | None = None):
        super().__init__(name, members, method="zscore")
        self.method = LEARNED
        self.paper, self.free_text = paper, free_text
        self._languages = np.array(self.papers.languages, dtype=object)
        self._lengths = np.array([len(text) for text in self.papers.texts], np.float64)

    def head(self, free: bool) -> Head:
        """The head that ranks a free text (``free``) or a paper of the collection."""
        return self.free_text if free and self.free_text is not None else self.paper

    def fused(self, parts: Sequence[np.ndarray], queries: Queries, which: np.ndarray,
              candidates: np.ndarray) -> np.ndarray:
        rows = np.asarray(candidates)
        if rows.ndim == 1:
            rows = np.broadcast_to(rows, (len(which), len(rows)))
        safe = np.maximum(rows, 0)
        languages, lengths = self._languages[safe], self._lengths[safe]
        free = np.asarray(queries.rows)[which] < 0
        query_languages = np.array([queries.languages[i] for i in which], dtype=object)
        out = np.full(rows.shape, -np.inf, np.float32)
        for is_free in (False, True):
            mask = free == is_free
            if not mask.any():
                continue
            head = self.head(is_free)
            chosen = [np.asarray(parts[m])[mask] for m in head.members]
            scores = head.score(chosen, query_languages[mask], languages[mask], lengths[mask])
            out[mask] = np.where(heard(chosen) & (rows[mask] >= 0), scores, -np.inf)
        return out

    def probability(self, scores: np.ndarray, free_text: bool = False) -> np.ndarray | None:
        calibration = self.head(free_text).calibration
        return None if calibration is None else calibration.probability(scores)


def head_of(found: Any, members: Sequence[str], what: str) -> Head:
    """The :class:`Head` stored as ``found`` (``{"members", "model", "calibration"}``, its
    members by name among ``members``); :class:`ArtifactError` naming ``what`` when it is
    not one."""
    if not isinstance(found, dict) or not isinstance(found.get("members"), list):
        raise ArtifactError(f"{what}: expected an object with its members")
    unknown = [m for m in found["members"] if m not in members]
    if unknown:
        raise ArtifactError(f"{what}: names {', '.join(map(str, unknown))}, not a member")
    fused = found.get("method")
    if found.get("model") is None and fused is None and len(found["members"]) != 1:
        raise ArtifactError(f"{what}: a head without a model or a method reads one member")
    if fused is not None and fused not in METHODS:
        raise ArtifactError(f"{what}: method must be one of {', '.join(METHODS)}")
    try:
        model = (LearnedModel.from_dict(found["model"], found["members"])
                 if found.get("model") is not None else None)
        calibration = (Calibration.from_dict(found["calibration"])
                       if found.get("calibration") is not None else None)
        weights = (tuple(checked_numbers(found.get("weights"), "weights"))
                   if fused is not None else ())
    except ArtifactError as error:
        raise ArtifactError(f"{what}: {error}") from None
    if fused is not None and len(weights) != len(found["members"]):
        raise ArtifactError(f"{what}: one weight a member")
    return Head(tuple(members.index(m) for m in found["members"]), model, calibration,
                fused, weights)


def weighs(spec: RankerEntry | None, head: str = "paper") -> dict[str, float] | None:
    """What the learned ranker ``spec`` (a stored ``ranker.json`` entry) weighs in its ``head``
    (``paper`` or ``free_text``): :func:`evidence_weights` of its trees' importances; ``None``
    when that head is not a tree model, or without an entry."""
    model = ((getattr(spec, head) if spec is not None else None) or {}).get("model") or {}
    importance = model.get("importance") if model.get("kind") == "lightgbm" else None
    return evidence_weights(importance) if isinstance(importance, dict) else None


def learned_fusion(name: str, members: Sequence[Scorer], spec: RankerEntry) -> LearnedFusion:
    """The :class:`LearnedFusion` a stored spec (``method: "model"``: ``members``, ``paper``
    and optionally ``free_text`` heads) stands for, over the member scorers ``members`` (in the
    spec's order); :class:`ArtifactError` when the spec is not one."""
    names = [str(m) for m in spec.members]
    if len(names) != len(members):
        raise ArtifactError(f"{name}: {len(names)} members named for {len(members)} scorers")
    paper = head_of(spec.paper, names, f"{name} paper model")
    free = (head_of(spec.free_text, names, f"{name} free-text model")
            if spec.free_text is not None else None)
    return LearnedFusion(name, members, paper, free)
