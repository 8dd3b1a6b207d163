"""``openmsd train citrec CORPUS --out DIR``: fine-tune MP-BERT4CR (§4.1) on a corpus's
citation contexts.

Each training example is a (location, target) pair of a location in a citing paper outside the
held-out set: the manuscript context (dynamic sampling, a new draw every time), the target's
paper context, up to ``positives`` extra positives from the target's co-citations and
``negatives`` negatives (:mod:`openmsd.train.citrec.samplers`), all drawn with one seeded
``random.Random``. The manuscript encoder embeds the location, the citation encoder the papers;
the loss is one of :data:`openmsd.train.citrec.losses.LOSSES` plus ``contrastive_weight`` × an
in-batch multi-positive InfoNCE at a cosine temperature (every other document of the batch is a
negative: :class:`~openmsd.train.citrec.losses.ContrastiveLoss`), or that InfoNCE alone
(``loss = "contrastive"``); AdamW with gradient clipping. ``also``: more corpora (every context
source a user has) whose training locations join training and whose dev locations join model
selection and the fusion weight.
The model directory is written whole, then moved into place, with ``citrec_train.json``: the
config, the data counts (per context source), the held-out citing papers, the loss history and
the dev history.

Model selection: a dev set of citing papers is held out of the training papers (``dev_fraction``,
the same ``split``); every ``eval_every`` steps, and before the first, the dev Recall@10 over all
candidates is measured and the best parameters are kept, the untrained start included, so a
trained model never ships worse on dev than where it started.

Training geometry: the hinge losses take cosine distances by default (``distance``), what the
index ranks by; see :mod:`openmsd.train.citrec.losses.base` for why Euclidean ones collapsed.
On a CPU, ``train_layers = 0`` (the default) freezes the transformer, encodes every sentence
training can draw once (:meth:`~openmsd.models.citrec.model.HierarchicalEncoder.warm`, with a
progress bar) and trains each side's layer norm, projection and supplemental weight on the
cached vectors (thousands of steps in minutes); ``train_layers = N`` fine-tunes the top N
transformer layers as well, ``train_encoder`` (``--train-encoder``) all of them (a GPU's job).
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from tqdm.auto import tqdm

from openmsd.corpus import Corpus
from openmsd.io import building_dir, write_json
from openmsd.models import (
    CITATION_FUNDAMENTAL,
    CITATION_SUPPLEMENTAL,
    MANUSCRIPT_SUPPLEMENTAL,
    CitrecModel,
    CitrecSettings,
    RerankFusion,
    cache_key,
    finished_content,
    manuscript_context,
    prompts,
)
from openmsd.rank import (
    FUSION_WEIGHTS,
    PREFETCH_DEPTH,
    SPLITS,
    TRAIN_MANIFEST,
    CitrecData,
    Location,
    PaperContexts,
    candidate_mask,
    choose_fusion_weight,
    fit_fusion,
    graph_scores,
    profile_scores,
    recall_at,
    rerank_rows,
    split_locations,
)
from openmsd.rank import load_citrec as load
from openmsd.train.citrec.losses import LOSSES, ContrastiveLoss
from openmsd.train.citrec.samplers import (
    NEGATIVES,
    POSITIVES,
    POWER,
    NegativeSampler,
    PositiveSampler,
    citation_counts,
    cocitation_counts,
)
from openmsd.train.config import ConfigError, config_from
from openmsd.train.recipes import base_path

CONTRASTIVE = "contrastive"
"""The loss name of the in-batch InfoNCE alone (no hinge loss)."""
HEAD_LEARNING_RATE = 1e-3
"""The learning rate when only the heads train (``train_layers = 0``)."""
FINE_TUNE_LEARNING_RATE = 2e-5
"""The learning rate when transformer layers train too."""


class CitrecConfigError(ConfigError):
    """A citrec setting that cannot be trained; the message names it."""


@dataclass
class CitrecConfig:
    """One citrec training run (defaults: the paper's, but one epoch and short sentences)."""

    corpus: str
    out: str
    base: str = "e5-small-multilingual"
    loss: str = "mpt-src-tgt"
    """A hinge loss of :data:`LOSSES`, or ``contrastive`` (the in-batch InfoNCE alone)."""
    margin: float = 0.2
    contrastive_weight: float = 1.0
    """Weight of the in-batch multi-positive InfoNCE (:class:`ContrastiveLoss`) added to the
    hinge loss; 0: the paper's hinge loss alone."""
    temperature: float = 0.05
    """The InfoNCE's cosine temperature."""
    distance: str = "cosine"
    """``cosine`` (distances between L2-normalised vectors, as the index ranks) or
    ``euclidean`` (the paper's, on raw vectors: collapses here, kept for the ablation)."""
    positives: int = POSITIVES
    negatives: int = NEGATIVES
    power: float = POWER
    dynamic_sampling: bool = True
    """False: the ablation — fundamental contexts only, on both sides."""
    manuscript_supplemental: int = MANUSCRIPT_SUPPLEMENTAL
    citation_fundamental: int = CITATION_FUNDAMENTAL
    citation_supplemental: int = CITATION_SUPPLEMENTAL
    epochs: int = 1
    max_steps: int | None = None
    batch_size: int = 32
    """Examples a step (the InfoNCE's in-batch negatives grow with it)."""
    learning_rate: float | None = None
    """None: 1e-3 with ``train_layers = 0`` (heads only), else 2e-5."""
    max_seq_length: int = 64
    freeze_embeddings: bool = True
    """Keep the transformer's input embeddings fixed (a 250k-word vocabulary is most of a
    multilingual model: freezing it saves about 3 GB of optimiser state and most of a CPU
    step)."""
    train_layers: int | None = 0
    """Train only the top N transformer layers (and the heads); None: all of them; 0: none
    (the transformer frozen, its sentence vectors cached: a CPU's setting)."""
    train_projection: bool = True
    """Train each side's linear projection (384 × 384 for e5-small); False: it stays the
    identity and only the layer norms' per-dimension scale and shift (and the supplemental
    weight) train — a re-weighting of the base model's space that ~1,000 training locations
    cannot overfit as easily."""
    train_encoder: bool = False
    """Fine-tune the whole transformer too (``train_layers`` None unless set above 0; learning
    rate 2e-5): the paper's setting, a GPU's job (``--train-encoder``)."""
    test_fraction: float = 0.3
    split: str = "random"
    """``random`` held-out citing papers, or ``time``: the newest are test (and dev)."""
    dev_fraction: float = 0.2
    """Of the training citing papers, this fraction is the dev set of model selection."""
    eval_every: int = 100
    """Steps between dev evaluations (and one before the first step)."""
    min_locations: int = 20
    """Fewer training locations than this is an error."""
    hard_negatives: int = 2
    """Of the ``negatives`` of a location, this many are drawn from the prefetch's top
    ``prefetch_depth`` candidates for it (the papers a reranker must tell apart), the others
    by citation count."""
    prefetch_depth: int = 100
    """How deep in the prefetch's ranking hard negatives are drawn."""
    fuse: bool = True
    """Choose on dev the weight of this model's rank against the prefetch's in the two-stage
    ranker (``fusion_weight`` in ``citrec.json``)."""
    rerank: bool = True
    """Fit the learned fusion of the two-stage ranker (``rerank`` in ``citrec.json``:
    :mod:`openmsd.rank.citrec.rerank`) on the training locations, with the untrained start's
    whole-manuscript cosine (labels it has not learnt) and the caller's own-sentence scores;
    needs the caller's :data:`Signals`."""
    outside_references: bool = False
    also: list[str] = dataclasses.field(default_factory=list)
    """More corpora to train on (every source's contexts: ``--also``): their training
    locations join the training set, their dev locations model selection and the fusion
    weight; the model is for ``corpus`` (its centres, its test set)."""
    seed: int = 0
    device: str | None = None

    def __post_init__(self) -> None:
        if self.loss not in (*LOSSES, CONTRASTIVE):
            raise CitrecConfigError(f"loss: unknown citrec loss {self.loss!r}: expected one of "
                                    f"{', '.join((*LOSSES, CONTRASTIVE))}")
        if self.contrastive_weight < 0 or (self.loss == CONTRASTIVE
                                           and self.contrastive_weight == 0):
            raise CitrecConfigError(f"contrastive_weight: must be at least 0 (above 0 with loss "
                                    f"{CONTRASTIVE}), got {self.contrastive_weight}")
        if self.temperature <= 0:
            raise CitrecConfigError(f"temperature: must be above 0, got {self.temperature}")
        if not isinstance(self.also, list) or not all(isinstance(c, str) for c in self.also):
            raise CitrecConfigError(f"also: expected a list of corpus directories, got "
                                    f"{self.also!r}")
        if self.train_encoder and self.train_layers == 0:
            self.train_layers = None
        for name in ("negatives", "epochs", "batch_size", "max_seq_length",
                     "citation_fundamental"):
            if getattr(self, name) < 1:
                raise CitrecConfigError(f"{name}: must be at least 1, got {getattr(self, name)}")
        for name in ("positives", "manuscript_supplemental", "citation_supplemental"):
            if getattr(self, name) < 0:
                raise CitrecConfigError(f"{name}: must be at least 0, got {getattr(self, name)}")
        for name in ("test_fraction", "dev_fraction"):
            if not 0 < getattr(self, name) < 1:
                raise CitrecConfigError(f"{name}: must be between 0 and 1, got "
                                        f"{getattr(self, name)}")
        if self.split not in SPLITS:
            raise CitrecConfigError(f"split: expected one of {', '.join(SPLITS)}, got "
                                    f"{self.split!r}")
        if self.distance not in ("cosine", "euclidean"):
            raise CitrecConfigError(f"distance: expected cosine or euclidean, got "
                                    f"{self.distance!r}")
        if not 0 <= self.hard_negatives <= self.negatives:
            raise CitrecConfigError(f"hard_negatives: must be between 0 and negatives "
                                    f"({self.negatives}), got {self.hard_negatives}")
        if self.prefetch_depth < 1:
            raise CitrecConfigError(f"prefetch_depth: must be at least 1, got "
                                    f"{self.prefetch_depth}")
        if self.max_steps is not None and self.max_steps < 0:
            raise CitrecConfigError(f"max_steps: must be at least 0, got {self.max_steps}")
        if self.eval_every < 1:
            raise CitrecConfigError(f"eval_every: must be at least 1, got {self.eval_every}")
        if self.learning_rate is None:
            self.learning_rate = (HEAD_LEARNING_RATE if self.train_layers == 0
                                  else FINE_TUNE_LEARNING_RATE)
        if not self.dynamic_sampling:
            self.manuscript_supplemental = self.citation_supplemental = 0

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def settings(self) -> CitrecSettings:
        """The settings the trained model is saved with (the base's registered prompts)."""
        shared = {f.name: getattr(self, f.name) for f in dataclasses.fields(CitrecSettings)
                  if hasattr(self, f.name)}
        registered = prompts(self.base)
        return CitrecSettings(**shared, query_prefix=registered.get("query", ""),
                              passage_prefix=registered.get("passage", ""),
                              frozen_base=self.train_layers == 0)


def load_citrec_config(path: Path | None = None, **overrides: Any) -> CitrecConfig:
    """A :class:`CitrecConfig` from a TOML / YAML file (or none) with ``overrides`` (those
    not None) on top (:func:`openmsd.train.config.config_from`; a ``recipe`` key is ignored)."""
    return config_from(CitrecConfig, path, ("corpus", "out"), ("recipe",), **overrides)


def seen_share(scores: np.ndarray, seen: np.ndarray, k: int = 10) -> float:
    """The share of the top-``k`` slots of ``scores`` (queries × candidates) taken by the
    candidates ``seen`` marks (bool per candidate), e.g. the papers training cited: near the
    share of such papers among the candidates when a model has not learnt who was cited.

    >>> seen_share(np.array([[3.0, 2.0, 1.0]]), np.array([True, False, False]), k=2)
    0.5
    """
    if not len(scores):
        return 0.0
    top = np.argpartition(-scores, min(k, scores.shape[1] - 1), axis=1)[:, :k]
    return float(seen[top].mean())


def citrec_scores(model: CitrecModel, locations: list[Location], candidates: list[str],
                  contexts: PaperContexts, mask: np.ndarray | None = None,
                  batch_size: int = 64) -> np.ndarray:
    """Cosine scores (queries × candidates) of ``model`` with deterministic contexts; masked
    pairs are −inf."""
    import torch  # optional: the models extra; torch takes ~2.8 s to import

    settings = model.settings
    sources = [manuscript_context(loc.sentences, loc.at, settings.manuscript_supplemental)
               for loc in locations]
    documents = [contexts.context(p, settings.citation_fundamental,
                                  settings.citation_supplemental) for p in candidates]
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        q = torch.cat([model.manuscript(sources[i:i + batch_size])
                       for i in range(0, len(sources), batch_size)])
        d = torch.cat([model.citation(documents[i:i + batch_size])
                       for i in range(0, len(documents), batch_size)])
        scores = (torch.nn.functional.normalize(q, dim=-1)
                  @ torch.nn.functional.normalize(d, dim=-1).T).cpu().numpy()
    model.train(was_training)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    return scores


def _digest(ids: set[str]) -> str:
    return hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()[:16]


Prefetch = Callable[[CitrecData, list[str], str], np.ndarray]
"""The prefetch ranker its caller gives :func:`train`: ``(data, candidates, split)`` → its
scores of all of ``data.locations`` over ``candidates`` (queries × candidates, masked pairs
−inf), e.g. :func:`openmsd.experiment.dev.prefetch_matrix`."""


Signals = Callable[[CitrecData, list[str], str], dict[str, np.ndarray]]
"""The rerank stage's own-sentence scores its caller gives :func:`train`: ``(data, candidates,
split)`` → {feature name: scores of all of ``data.locations`` over ``candidates``}, e.g.
:func:`openmsd.experiment.dev.sentence_signals` (``sentence_bm25``, ``sentence_dense``)."""


class CitrecRankers(NamedTuple):
    """What ``train citrec`` gets from its caller: the prefetch and the own-sentence scores."""

    prefetch: Prefetch
    signals: Signals | None = None


PROBE = 200
"""Training locations whose Recall@10 is followed during training (``train_recall@10``)."""


@dataclass
class _Part:
    """One corpus's share of a run: its training and dev locations, held-out citing papers,
    candidates and prefetch scores (all of its locations × candidates)."""

    root: str
    data: CitrecData
    learn: list[Location]
    train: list[Location]
    dev: list[Location]
    test: set[str]
    dev_papers: set[str]
    test_locations: int
    candidates: list[str]
    dev_mask: np.ndarray
    scores: np.ndarray | None
    probe: list[Location]
    """A seeded sample of the training locations (at most :data:`PROBE`) whose Recall@10 is
    measured beside dev's: whether the positives separate on what the model trains on."""
    probe_mask: np.ndarray
    signals: dict[str, np.ndarray] | None = None
    """The caller's own-sentence scores of all of its locations (:data:`Signals`)."""
    split: str = "random"

    @classmethod
    def of(cls, root: str, data: CitrecData, config: CitrecConfig, prefetch: Prefetch | None,
           signals: Signals | None = None) -> _Part:
        learn, test_locations, test = split_locations(data, config.test_fraction, config.seed,
                                                      config.split)
        train_locations, dev_locations, dev = split_locations(
            data, config.dev_fraction, config.seed, config.split, learn)
        candidates = sorted(data.papers)
        scores = (prefetch(data, candidates, config.split)
                  if prefetch is not None and (config.hard_negatives or config.fuse) else None)
        probe = random.Random(config.seed).sample(train_locations,
                                                  min(PROBE, len(train_locations)))
        return cls(root, data, learn, train_locations, dev_locations, test, dev,
                   len(test_locations), candidates,
                   candidate_mask(data, dev_locations, candidates, config.split), scores,
                   probe, candidate_mask(data, probe, candidates, config.split),
                   signals(data, candidates, config.split)
                   if signals is not None and config.rerank and scores is not None else None,
                   config.split)

    def rows(self, locations: list[Location]) -> list[int]:
        """The rows of ``locations`` in this part's all-locations matrices."""
        row_of = {id(loc): i for i, loc in enumerate(self.data.locations)}
        return [row_of[id(loc)] for loc in locations]

    def prefetch_rows(self, locations: list[Location]) -> np.ndarray:
        """The prefetch's scores of ``locations`` (of this part)."""
        assert self.scores is not None
        return self.scores[self.rows(locations)]

    def rerank_signals(self, model: CitrecModel, locations: list[Location],
                       contexts: PaperContexts) -> dict[str, np.ndarray]:
        """The rerank features' scores of ``locations``: the caller's own-sentence ones,
        ``model``'s whole-manuscript cosine and the citation graph's (:func:`graph_scores`:
        the test and dev citing papers' links never read)."""
        assert self.signals is not None
        rows = self.rows(locations)
        manuscript = profile_scores(model, locations, self.candidates, contexts)
        return {**{name: values[rows] for name, values in self.signals.items()},
                "manuscript": manuscript,
                **graph_scores(self.data, locations, self.candidates, self.prefetch_rows(locations),
                               manuscript, self.test | self.dev_papers, self.split)}

    def relevant(self, locations: list[Location]) -> list[list[int]]:
        """Each location's cited candidates as columns."""
        column = {p: i for i, p in enumerate(self.candidates)}
        return [[column[c] for c in loc.cited] for loc in locations]

    def counts(self) -> dict[str, Any]:
        return {"corpus": self.root, "locations": len(self.data.locations),
                "train_locations": len(self.train), "dev_locations": len(self.dev),
                "test_locations": self.test_locations, "candidates": len(self.data.papers),
                "locations_per_source": self.data.sources()}


def _pooled(values: list[tuple[float, int]]) -> float:
    """The mean of per-part recalls weighted by their number of locations."""
    total = sum(n for _, n in values)
    return sum(v * n for v, n in values) / total if total else 0.0


def train(config: CitrecConfig, prefetch: Prefetch | CitrecRankers | None = None,
          progress: bool = True, data: CitrecData | None = None,
          also_data: list[CitrecData] | None = None) -> dict[str, Any]:
    """Train as ``config`` says; write the best model on dev (the untrained start included) to
    ``config.out``; return the manifest. ``prefetch``: the caller's prefetch ranker
    (:data:`Prefetch`), needed when hard negatives or fusion are on, or
    :class:`CitrecRankers` (the prefetch and the own-sentence :data:`Signals` the learned
    rerank fusion needs; without them ``rerank`` is not fitted); ``data`` (and
    ``also_data``, one per ``config.also``): the corpora's locations and candidates when already
    loaded (:func:`openmsd.rank.load_citrec` with ``config``'s ``outside_references``).

    ``config.also``: more corpora whose training locations join the training set and whose dev
    locations join model selection and the fusion weight (pooled: each ranked among its own
    corpus's candidates); their test citing papers are never seen either.

    The steps, in order: :func:`_rankers`, :func:`_load_parts`, :func:`_check_locations`,
    :func:`_samplers`, :func:`_start_model`, :func:`_fit_rerank`, :func:`_hard_negatives`,
    :func:`_trainable`, :func:`_schedule`, :func:`_run_steps` (with :class:`_DevSelection`),
    :func:`_fusion`, :func:`_rerank_report`, :func:`_manifest`, :func:`_write_model`."""
    prefetch, signals = _rankers(config, prefetch)
    parts = _load_parts(config, prefetch, signals, data, also_data)
    train_locations = [loc for part in parts for loc in part.train]
    dev_count = sum(len(part.dev) for part in parts)
    _check_locations(config, parts, train_locations, dev_count)
    positive_sampler, sampler_of = _samplers(config, parts)
    settings = config.settings()
    contexts = PaperContexts({p: text for part in parts for p, text in part.data.papers.items()})
    model = _start_model(config, settings, parts, train_locations, contexts, progress)
    rerank, no_rerank = (_fit_rerank(model, parts, contexts)
                         if all(part.signals is not None for part in parts)
                         else (None, "no own-sentence scores given" if config.rerank
                               else "rerank = false"))
    hard = _hard_negatives(config, parts)
    trainable = _trainable(config, model)
    examples, steps, epochs = _schedule(config, train_locations)
    selection = _DevSelection(model, parts, contexts, trainable)
    history, seconds = _run_steps(config, model, trainable, selection, examples, steps, epochs,
                                  contexts, positive_sampler, sampler_of, hard, progress)
    selection.restore()
    fusion = _fusion(config, parts, selection.best["scores"], settings)
    fusion.update(_rerank_report(model, parts, contexts, settings, rerank, no_rerank))
    manifest = _manifest(config, parts, train_locations, dev_count, examples, steps, seconds,
                         history, selection, fusion)
    _write_model(model, config, manifest)
    return manifest


def _rankers(config: CitrecConfig, prefetch: Prefetch | CitrecRankers | None
             ) -> tuple[Prefetch | None, Signals | None]:
    """The caller's prefetch ranker and own-sentence signals; CitrecConfigError when hard
    negatives or fusion are asked for without a prefetch."""
    signals = None
    if isinstance(prefetch, CitrecRankers):
        prefetch, signals = prefetch.prefetch, prefetch.signals
    if prefetch is None and (config.hard_negatives or config.fuse):
        raise CitrecConfigError("hard_negatives / fuse: they need a prefetch ranker (set "
                                "hard_negatives = 0 and fuse = false to train without one)")
    return prefetch, signals


def _load_parts(config: CitrecConfig, prefetch: Prefetch | None, signals: Signals | None,
                data: CitrecData | None, also_data: list[CitrecData] | None) -> list[_Part]:
    """One :class:`_Part` per corpus (``config.corpus`` first, then ``config.also``), each
    corpus checked; ``data`` / ``also_data`` when given, else loaded."""
    roots = [config.corpus, *config.also]
    given = [data, *(also_data or [None] * len(config.also))]
    if len(given) != len(roots):
        raise CitrecConfigError(f"also: {len(config.also)} corpora but {len(given) - 1} data sets")
    parts = []
    for root, loaded in zip(roots, given, strict=True):
        corpus = Corpus(root)
        corpus.check()
        parts.append(_Part.of(str(corpus.root), loaded or load(corpus, config.outside_references),
                              config, prefetch, signals))
    return parts


def _check_locations(config: CitrecConfig, parts: list[_Part], train_locations: list[Location],
                     dev_count: int) -> None:
    """CitrecConfigError, naming the counts, when there are fewer training locations than
    ``min_locations`` or no dev location to select the model on."""
    main = parts[0]
    if len(train_locations) < config.min_locations:
        raise CitrecConfigError(
            "; ".join(f"{part.root}: {len(part.train)} training locations (of "
                      f"{len(part.data.locations)}; {len(part.test)} test and "
                      f"{len(part.dev_papers)} dev citing papers held out)" for part in parts)
            + f": {len(train_locations)} in all, fewer than min_locations = "
            f"{config.min_locations}")
    if not dev_count:
        raise CitrecConfigError(f"{main.root}: no dev citing paper left for model selection "
                                f"({len({loc.citing_id for loc in main.learn})} training "
                                "citing papers); add citing papers or raise dev_fraction")


def _samplers(config: CitrecConfig, parts: list[_Part]
              ) -> tuple[PositiveSampler, dict[int, NegativeSampler]]:
    """The positive sampler (co-citations of every part's reference lists, held-out and dev
    citing papers' left out) and each training location's negative sampler (its part's)."""
    history_lists = {id(part): [cited for citing, cited in part.data.reference_lists.items()
                                if citing not in part.test and citing not in part.dev_papers]
                     for part in parts}
    positive_sampler = PositiveSampler(cocitation_counts(
        [cited for lists in history_lists.values() for cited in lists]), config.power)
    sampler_of: dict[int, NegativeSampler] = {}
    for part in parts:
        sampler = NegativeSampler(part.candidates, citation_counts(history_lists[id(part)]),
                                  config.power)
        sampler_of.update((id(loc), sampler) for loc in part.train)
    return positive_sampler, sampler_of


def _start_model(config: CitrecConfig, settings: CitrecSettings, parts: list[_Part],
                 train_locations: list[Location], contexts: PaperContexts, progress: bool
                 ) -> CitrecModel:
    """The untrained model (seeded), in training mode: with frozen encoders
    (``train_layers = 0``) every sentence training can draw encoded once; the centres fitted
    on the main corpus's sentences (the one the model is for)."""
    import torch  # optional: the models extra; torch takes ~2.8 s to import

    main = parts[0]
    torch.manual_seed(config.seed)
    model = CitrecModel.from_base(base_path(config.base), settings, config.device)
    model.train()
    if config.train_layers == 0:
        model.manuscript.freeze(cache_key(settings, "manuscript"))
        model.citation.freeze(cache_key(settings, "citation"))
    if config.train_layers == 0:  # every sentence training can draw, once, with progress
        model.manuscript.warm([s for loc in train_locations for s in (
                                  loc.sentences if settings.manuscript_supplemental
                                  else manuscript_context(loc.sentences, loc.at, 0))]
                              + [s for part in parts for loc in part.dev
                                 for s in manuscript_context(loc.sentences, loc.at,
                                                             settings.manuscript_supplemental)]
                              + [s for part in parts if part.signals is not None
                                 for loc in part.train + part.dev
                                 for s in finished_content(loc.sentences, loc.at)],
                              progress)
        model.citation.warm([s for part in parts for p in part.candidates
                             for s in contexts.drawable(p, settings.citation_fundamental,
                                                        settings.citation_supplemental)],
                            progress)
    model.manuscript.fit_centre([s for loc in main.learn for s in manuscript_context(
        loc.sentences, loc.at, settings.manuscript_supplemental)], limit=2000)
    model.citation.fit_centre([s for p in main.candidates for s in contexts.context(
        p, settings.citation_fundamental, settings.citation_supplemental)], limit=2000)
    return model


def _hard_negatives(config: CitrecConfig, parts: list[_Part]) -> dict[int, list[str]]:
    """Each training location's hard negatives (by ``id``): the prefetch's first
    ``prefetch_depth`` candidates it does not cite; {} without hard negatives."""
    hard: dict[int, list[str]] = {}
    for part in parts:
        if part.scores is None or not config.hard_negatives:
            continue
        rows = part.prefetch_rows(part.train)
        for loc, row in zip(part.train, rows, strict=True):
            top = np.argsort(-row, kind="stable")[:config.prefetch_depth]
            hard[id(loc)] = [part.candidates[j] for j in top
                             if part.candidates[j] not in loc.cited and np.isfinite(row[j])]
    return hard


def _trainable(config: CitrecConfig, model: CitrecModel) -> dict[str, Any]:
    """Freeze what ``config`` keeps fixed (embeddings, lower layers, projections); the
    parameters left to train, by name."""
    if config.train_layers != 0:
        if config.freeze_embeddings:
            for encoder in (model.manuscript, model.citation):
                for parameter in (encoder.transformer.auto_model.get_input_embeddings()
                                  .parameters()):
                    parameter.requires_grad_(False)
        if config.train_layers is not None:
            for encoder in (model.manuscript, model.citation):
                _freeze_lower_layers(encoder.transformer.auto_model, config.train_layers)
    if not config.train_projection:
        for encoder in (model.manuscript, model.citation):
            encoder.projection.requires_grad_(False)
    return {n: p for n, p in model.named_parameters() if p.requires_grad}


def _schedule(config: CitrecConfig, train_locations: list[Location]
              ) -> tuple[list[tuple[Location, str]], int, int]:
    """The training examples (a location and one paper it cites), the number of steps and
    of epochs (with ``max_steps``: as many epochs as it takes)."""
    examples = [(loc, target) for loc in train_locations for target in loc.cited]
    per_epoch = -(-len(examples) // config.batch_size)
    steps = per_epoch * config.epochs if config.max_steps is None else config.max_steps
    epochs = max(config.epochs, -(-steps * config.batch_size // max(len(examples), 1)))
    return examples, steps, epochs


class _DevSelection:
    """Model selection on dev: each evaluation's pooled Recall@10 (and the main corpus's
    training probe) in ``history``; the best step's parameters and dev scores in ``best``."""

    def __init__(self, model: CitrecModel, parts: list[_Part], contexts: PaperContexts,
                 trainable: dict[str, Any]):
        self.model, self.parts, self.contexts, self.trainable = model, parts, contexts, trainable
        self.history: list[dict[str, float]] = []
        self.best: dict[str, Any] = {"step": 0, "recall": -1.0, "state": None}
        main = parts[0]
        cited_in_training = {c for loc in main.train for c in loc.cited}
        self.train_cited = np.array([p in cited_in_training for p in main.candidates])

    def evaluate(self, step: int) -> None:
        """Score dev (and the probe) at ``step``; keep the parameters when they are the best."""
        model, parts, contexts, main = self.model, self.parts, self.contexts, self.parts[0]
        both = (citrec_scores(model, main.dev + main.probe, main.candidates, contexts,
                              np.vstack([main.dev_mask, main.probe_mask]))
                if main.dev or main.probe else np.zeros((0, len(main.candidates))))
        scores = [citrec_scores(model, part.dev, part.candidates, contexts, part.dev_mask)
                  if part.dev else None for part in parts[1:]]
        scores.insert(0, both[:len(main.dev)] if main.dev else None)
        recalls = [(recall_at(s, part.dev, part.candidates), len(part.dev))
                   for s, part in zip(scores, parts, strict=True) if s is not None]
        recall = _pooled(recalls)
        self.history.append({"step": step, "dev_recall@10": round(recall, 5),
                             "dev_top10_train_cited": round(seen_share(both[:len(main.dev)],
                                                                       self.train_cited), 5),
                             "train_recall@10": round(recall_at(  # 0.0 without a probe
                                 both[len(main.dev):], main.probe, main.candidates), 5),
                             **({f"dev_recall@10/{part.root}": round(r, 5)
                                 for part, (r, _) in zip([p for p in parts if p.dev], recalls,
                                                          strict=True)}
                                if len(parts) > 1 else {})})
        if recall > self.best["recall"]:
            self.best.update(step=step, recall=recall, scores=scores,
                             state={n: p.detach().clone() for n, p in self.trainable.items()})

    def restore(self) -> None:
        """Put the best step's parameters back into the model."""
        import torch  # optional: the models extra; torch takes ~2.8 s to import

        with torch.no_grad():
            for name, value in self.best["state"].items():
                self.trainable[name].copy_(value)


def _run_steps(config: CitrecConfig, model: CitrecModel, trainable: dict[str, Any],
               selection: _DevSelection, examples: list[tuple[Location, str]], steps: int,
               epochs: int, contexts: PaperContexts, positive_sampler: PositiveSampler,
               sampler_of: dict[int, NegativeSampler], hard: dict[int, list[str]],
               progress: bool) -> tuple[list[dict[str, float]], float]:
    """The training loop (AdamW, gradients clipped at 1), dev evaluated at the start, every
    ``eval_every`` steps and at the end; the loss of each step and the seconds it took."""
    import torch  # optional: the models extra; torch takes ~2.8 s to import

    loss_fn = Objective(config)
    optimizer = torch.optim.AdamW(list(trainable.values()), lr=config.learning_rate)
    rng = random.Random(config.seed)
    history: list[dict[str, float]] = []
    start = time.perf_counter()
    selection.evaluate(0)
    bar = tqdm(total=steps, desc="citrec", disable=not progress)
    order = [e for _ in range(epochs) for e in rng.sample(examples, len(examples))]
    for step in range(steps):
        batch = order[step * config.batch_size:(step + 1) * config.batch_size]
        loss = _step_loss(model, loss_fn, batch, contexts, positive_sampler, sampler_of,
                          config, rng, hard)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(trainable.values()), 1.0)
        optimizer.step()
        value = loss.item()
        history.append({"step": step + 1, "loss": round(value, 5)})
        if (step + 1) % config.eval_every == 0 or step + 1 == steps:
            selection.evaluate(step + 1)
        bar.update(1)
        best = selection.best
        bar.set_postfix(loss=f"{value:.3f}", dev=f"{best['recall']:.3f}@{best['step']}")
    bar.close()
    return history, time.perf_counter() - start


def _fusion(config: CitrecConfig, parts: list[_Part], scores: list[np.ndarray | None],
            settings: CitrecSettings) -> dict[str, Any]:
    """With ``fuse`` and a prefetch: the two-stage weight with the best pooled dev recall
    (the smaller on ties), set in ``settings``, and every weight's recall; else {}."""
    if not (config.fuse and all(part.scores is not None for part in parts)):
        return {}
    curves = [(choose_fusion_weight(s, part.prefetch_rows(part.dev), part.dev,
                                    part.candidates)[1], len(part.dev))
              for s, part in zip(scores, parts, strict=True) if part.dev]
    recalls = {w: _pooled([(curve[w], n) for curve, n in curves]) for w in FUSION_WEIGHTS}
    weight = max(FUSION_WEIGHTS, key=lambda w: (recalls[w], -w))
    settings.fusion_weight = weight
    return {"fusion_weight": weight, "dev_two_stage_recall@10": {
        str(w): round(r, 5) for w, r in recalls.items()}}


def _rerank_report(model: CitrecModel, parts: list[_Part], contexts: PaperContexts,
                   settings: CitrecSettings, rerank: RerankFusion | None,
                   no_rerank: str | None) -> dict[str, Any]:
    """The learned rerank fusion, set in ``settings``, with its pooled dev Recall@10 and the
    prefetch's; or why it was not fitted."""
    if rerank is None:
        return {"rerank_not_fitted": no_rerank}
    settings.rerank = rerank.as_dict()
    dev = [(recall_at(rerank_rows(part.prefetch_rows(part.dev),
                                  part.rerank_signals(model, part.dev, contexts), rerank,
                                  PREFETCH_DEPTH), part.dev, part.candidates),
            recall_at(part.prefetch_rows(part.dev), part.dev, part.candidates),
            len(part.dev)) for part in parts if part.dev]
    return {"rerank": rerank.as_dict(),
            "dev_rerank_recall@10": round(_pooled([(r, n) for r, _, n in dev]), 5),
            "dev_prefetch_recall@10": round(_pooled([(p, n) for _, p, n in dev]), 5)}


def _manifest(config: CitrecConfig, parts: list[_Part], train_locations: list[Location],
              dev_count: int, examples: list[tuple[Location, str]], steps: int, seconds: float,
              history: list[dict[str, float]], selection: _DevSelection,
              fusion: dict[str, Any]) -> dict[str, Any]:
    """What was trained on (the held-out and dev citing papers named), and the metrics."""
    main, best, dev_history = parts[0], selection.best, selection.history
    return {"config": config.as_dict(), "data": {
        **main.counts(), "train_locations": len(train_locations), "dev_locations": dev_count,
        "train_examples": len(examples),
        "held_out_citing_papers": sorted(main.test), "held_out_digest": _digest(main.test),
        "dev_citing_papers": sorted(main.dev_papers), "left_out": main.data.left_out,
        **({"corpora": [part.counts() for part in parts]} if len(parts) > 1 else {})},
        "metrics": {"steps": steps, "train_seconds": round(seconds, 1),
                    "examples_per_second": round(steps * config.batch_size / max(seconds, 1e-9),
                                                 3),
                    "first_loss": history[0]["loss"] if history else None,
                    "last_loss": history[-1]["loss"] if history else None,
                    "start_dev_recall@10": dev_history[0]["dev_recall@10"],
                    "best_dev_recall@10": round(best["recall"], 5),
                    "best_step": best["step"], **fusion,
                    "dev_history": dev_history, "history": history}}


def _write_model(model: CitrecModel, config: CitrecConfig, manifest: dict[str, Any]) -> None:
    """The model, in evaluation mode, and its manifest, written whole to ``config.out``."""
    model.eval()
    with building_dir(Path(config.out)) as tmp:
        model.save(tmp)
        write_json(tmp / TRAIN_MANIFEST, manifest)


def _fit_rerank(model: CitrecModel, parts: list[_Part], contexts: PaperContexts
                ) -> tuple[RerankFusion | None, str | None]:
    """The learned rerank fusion, fitted on every part's training locations with the
    untrained ``model``'s whole-manuscript cosine (the start has learnt no label: its scores
    on training locations are what they will be on new ones), or None and why not."""
    prefetch, signals, relevant = [], [], []
    for part in parts:
        prefetch.append(part.prefetch_rows(part.train))
        signals.append(part.rerank_signals(model, part.train, contexts))
        relevant += part.relevant(part.train)
    width = max(p.shape[1] for p in prefetch)

    def padded(matrix: np.ndarray) -> np.ndarray:  # parts differ in their candidates
        return np.pad(matrix, ((0, 0), (0, width - matrix.shape[1])),
                      constant_values=-np.inf)

    try:
        return fit_fusion(np.vstack([padded(p) for p in prefetch]),
                          {name: np.vstack([padded(s[name]) for s in signals])
                           for name in signals[0]}, relevant, depth=PREFETCH_DEPTH), None
    except ValueError as error:  # no cited candidate among the prefetched ones
        return None, str(error)


def _freeze_lower_layers(transformer: Any, keep: int) -> None:
    """Freeze the embeddings and all but the top ``keep`` layers of a BERT-like encoder."""
    layers = getattr(getattr(transformer, "encoder", None), "layer", None)
    if layers is None:
        raise CitrecConfigError("train_layers: the base model has no encoder.layer list "
                                "(not BERT-like); leave train_layers unset")
    frozen = [transformer.get_input_embeddings(), getattr(transformer, "embeddings", None),
              *list(layers)[:max(0, len(layers) - keep)]]
    for module in frozen:
        if module is not None:
            for parameter in module.parameters():
                parameter.requires_grad_(False)


class Objective:
    """``config``'s training loss of one batch: its hinge loss (none with ``contrastive``) +
    ``contrastive_weight`` × the in-batch InfoNCE."""

    def __init__(self, config: CitrecConfig):
        self.hinge = (LOSSES[config.loss](config.margin, config.distance)
                      if config.loss in LOSSES else None)
        self.weight = config.contrastive_weight
        self.contrastive = ContrastiveLoss(config.temperature)

    def __call__(self, source: Any, target: Any, positive: Any, negative: Any, mask: Any,
                 documents: Any, in_batch: Any, ignore: Any) -> Any:
        """``source`` … ``mask``: the hinge loss's inputs; ``documents`` (N, d) every
        citation-side vector of the batch, ``in_batch`` / ``ignore`` (B, N) its positives and
        the papers to leave out of a row's negatives."""
        loss = self.hinge(source, target, positive, negative, mask) if self.hinge else 0.0
        if self.weight:
            loss = loss + self.weight * self.contrastive(source, documents, in_batch, ignore)
        return loss


def _step_loss(model: CitrecModel, loss_fn: Objective, batch: list[tuple[Location, str]],
               contexts: PaperContexts, positives: PositiveSampler,
               negatives: dict[int, NegativeSampler], config: CitrecConfig,
               rng: random.Random,
               hard: dict[int, list[str]] | None = None) -> Any:
    """The loss of one batch of (location, target) examples; ``hard``: per location
    (``id``), the prefetch's top candidates it does not cite, to draw hard negatives from."""
    import torch  # optional: the models extra; torch takes ~2.8 s to import

    manuscripts, papers, extra, negative = [], [], [], []
    for location, target in batch:
        manuscripts.append(manuscript_context(location.sentences, location.at,
                                              config.manuscript_supplemental, rng))
        chosen = positives.sample(target, config.positives, rng,
                                  exclude={target, location.citing_id})
        extra.append(chosen)
        pool = [p for p in (hard or {}).get(id(location), []) if p not in chosen]
        drawn = rng.sample(pool, min(config.hard_negatives, len(pool)))
        drawn += negatives[id(location)].sample(config.negatives - len(drawn), rng,
                                  exclude={*location.cited, *chosen, *drawn,
                                           location.citing_id})
        negative.append(drawn)
        papers.append(target)
    width = max(len(p) for p in extra)
    if any(len(n) < config.negatives for n in negative):
        raise CitrecConfigError(f"negatives: fewer than {config.negatives} candidate papers "
                                "are left to draw from")
    ids = papers + [p for row in extra for p in row] + [n for row in negative for n in row]
    documents = [contexts.context(p, config.citation_fundamental, config.citation_supplemental,
                                  rng) for p in ids]
    source = model.manuscript(manuscripts)
    vectors = model.citation(documents)
    b, dim = len(batch), source.shape[1]
    target = vectors[:b]
    positive = source.new_zeros(b, width, dim)
    mask = torch.zeros(b, width, dtype=torch.bool)
    cursor = b
    for i, row in enumerate(extra):
        positive[i, :len(row)] = vectors[cursor:cursor + len(row)]
        mask[i, :len(row)] = True
        cursor += len(row)
    negative_vectors = vectors[cursor:].reshape(b, config.negatives, dim)
    in_batch = torch.tensor([[p == t or p in row for p in ids]
                             for t, row in zip(papers, extra, strict=True)])
    ignore = torch.tensor([[p in location.cited or p == location.citing_id for p in ids]
                           for location, _ in batch])
    return loss_fn(source, target, positive, negative_vectors, mask, vectors, in_batch, ignore)
