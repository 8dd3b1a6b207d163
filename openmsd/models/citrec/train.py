"""``openmsd train citrec CORPUS --out DIR``: fine-tune MP-BERT4CR (§4.1) on a corpus's
citation contexts.

Each training example is a (location, target) pair of a location in a citing paper outside the
held-out set: the manuscript context (dynamic sampling, a new draw every time), the target's
paper context, up to ``positives`` extra positives from the target's co-citations and
``negatives`` negatives (:mod:`openmsd.models.citrec.samplers`), all drawn with one seeded
``random.Random``. The manuscript encoder embeds the location, the citation encoder the papers;
the loss is one of :data:`openmsd.models.citrec.losses.LOSSES`; AdamW with gradient clipping.
The model directory is written whole, then moved into place, with ``citrec_train.json``: the
config, the data counts, the held-out citing papers and the loss history.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmsd.corpus.store import Corpus, building_dir, write_json
from openmsd.models.citrec.context import (
    CITATION_FUNDAMENTAL,
    CITATION_SUPPLEMENTAL,
    MANUSCRIPT_SUPPLEMENTAL,
    manuscript_context,
    paper_context,
)
from openmsd.models.citrec.data import CitrecData, Location, held_out, load
from openmsd.models.citrec.losses import LOSSES
from openmsd.models.citrec.model import CitrecModel, CitrecSettings
from openmsd.models.citrec.samplers import (
    NEGATIVES,
    POSITIVES,
    POWER,
    NegativeSampler,
    PositiveSampler,
    citation_counts,
    cocitation_counts,
)
from openmsd.models.citrec.sentences import split_sentences

TRAIN_MANIFEST = "citrec_train.json"


class CitrecConfigError(ValueError):
    """A citrec setting that cannot be trained; the message names it."""


@dataclass
class CitrecConfig:
    """One citrec training run (defaults: the paper's, but one epoch and short sentences)."""

    corpus: str
    out: str
    base: str = "e5-small-multilingual"
    loss: str = "mpt-src-tgt"
    margin: float = 1.0
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
    batch_size: int = 1
    learning_rate: float = 2e-5
    max_seq_length: int = 64
    freeze_embeddings: bool = True
    """Keep the transformer's input embeddings fixed (a 250k-word vocabulary is most of a
    multilingual model: freezing it saves about 3 GB of optimiser state and most of a CPU
    step)."""
    train_layers: int | None = None
    """Train only the top N transformer layers (and the layer norms); None: all of them. On a
    CPU, 2 makes a step several times cheaper: no activations are kept for the frozen ones."""
    test_fraction: float = 0.3
    outside_references: bool = False
    seed: int = 0
    device: str | None = None

    def __post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise CitrecConfigError(f"loss: unknown citrec loss {self.loss!r}: expected one of "
                                    f"{', '.join(LOSSES)}")
        for name in ("negatives", "epochs", "batch_size", "max_seq_length",
                     "citation_fundamental"):
            if getattr(self, name) < 1:
                raise CitrecConfigError(f"{name}: must be at least 1, got {getattr(self, name)}")
        for name in ("positives", "manuscript_supplemental", "citation_supplemental"):
            if getattr(self, name) < 0:
                raise CitrecConfigError(f"{name}: must be at least 0, got {getattr(self, name)}")
        if not 0 < self.test_fraction < 1:
            raise CitrecConfigError(f"test_fraction: must be between 0 and 1, got "
                                    f"{self.test_fraction}")
        if not self.dynamic_sampling:
            self.manuscript_supplemental = self.citation_supplemental = 0

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class PaperContexts:
    """Each candidate's (title + abstract sentences, body sentences), split once."""

    def __init__(self, papers: dict[str, tuple[str, str | None]]):
        self.papers = papers
        self.cache: dict[str, tuple[list[str], list[str]]] = {}

    def sentences(self, paper_id: str) -> tuple[list[str], list[str]]:
        if paper_id not in self.cache:
            head, body = self.papers[paper_id]
            self.cache[paper_id] = (split_sentences(head) or [head],
                                    split_sentences(body) if body else [])
        return self.cache[paper_id]

    def context(self, paper_id: str, fundamental: int, supplemental: int,
                rng: random.Random | None = None) -> list[str]:
        head, body = self.sentences(paper_id)
        return paper_context(head, body, fundamental, supplemental, rng)


def split_locations(data: CitrecData, fraction: float, seed: int
                    ) -> tuple[list[Location], list[Location], set[str]]:
    """(train locations, test locations, held-out citing papers)."""
    test = held_out({loc.citing_id for loc in data.locations}, fraction, seed)
    return ([loc for loc in data.locations if loc.citing_id not in test],
            [loc for loc in data.locations if loc.citing_id in test], test)


def _digest(ids: set[str]) -> str:
    return hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()[:16]


def train(config: CitrecConfig, progress: bool = True) -> dict[str, Any]:
    """Train as ``config`` says; write the model to ``config.out``; return the manifest."""
    import torch
    from tqdm.auto import tqdm

    from openmsd.models.train import PROMPTS, base_path

    corpus = Corpus(config.corpus)
    corpus.check()
    data = load(corpus, config.outside_references)
    train_locations, test_locations, test = split_locations(data, config.test_fraction,
                                                            config.seed)
    if not train_locations:
        raise CitrecConfigError(f"{corpus.root}: no training location left after holding out "
                                f"{len(test)} citing papers")
    history_lists = [cited for citing, cited in data.reference_lists.items()
                     if citing not in test]
    positive_sampler = PositiveSampler(cocitation_counts(history_lists), config.power)
    negative_sampler = NegativeSampler(sorted(data.papers), citation_counts(history_lists),
                                       config.power)
    prompts = PROMPTS.get(config.base, {})
    settings = CitrecSettings(config.base, prompts.get("query", ""), prompts.get("passage", ""),
                              config.max_seq_length, config.manuscript_supplemental,
                              config.citation_fundamental, config.citation_supplemental)
    torch.manual_seed(config.seed)
    model = CitrecModel.from_base(base_path(config.base), settings, config.device)
    model.train()
    if config.freeze_embeddings:
        for encoder in (model.manuscript, model.citation):
            for parameter in encoder.transformer.auto_model.get_input_embeddings().parameters():
                parameter.requires_grad_(False)
    if config.train_layers is not None:
        for encoder in (model.manuscript, model.citation):
            _freeze_lower_layers(encoder.transformer.auto_model, config.train_layers)
    loss_fn = LOSSES[config.loss](config.margin)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad],
                                  lr=config.learning_rate)
    contexts = PaperContexts(data.papers)
    rng = random.Random(config.seed)
    examples = [(loc, target) for loc in train_locations for target in loc.cited]
    total = len(examples) * config.epochs // config.batch_size + (
        1 if len(examples) * config.epochs % config.batch_size else 0)
    steps = min(total, config.max_steps or total)
    history: list[dict[str, float]] = []
    start = time.perf_counter()
    bar = tqdm(total=steps, desc="citrec", disable=not progress)
    order = [e for _ in range(config.epochs) for e in rng.sample(examples, len(examples))]
    for step in range(steps):
        batch = order[step * config.batch_size:(step + 1) * config.batch_size]
        loss = _step_loss(model, loss_fn, batch, contexts, positive_sampler, negative_sampler,
                          config, rng)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        value = loss.item()
        history.append({"step": step + 1, "loss": round(value, 5)})
        bar.update(1)
        bar.set_postfix(loss=f"{value:.3f}")
    bar.close()
    seconds = time.perf_counter() - start
    manifest = {"config": config.as_dict(), "data": {
        "locations": len(data.locations), "train_locations": len(train_locations),
        "test_locations": len(test_locations), "train_examples": len(examples),
        "candidates": len(data.papers), "held_out_citing_papers": sorted(test),
        "held_out_digest": _digest(test), "left_out": data.left_out},
        "metrics": {"steps": steps, "train_seconds": round(seconds, 1),
                    "examples_per_second": round(steps * config.batch_size / max(seconds, 1e-9),
                                                 3),
                    "first_loss": history[0]["loss"] if history else None,
                    "last_loss": history[-1]["loss"] if history else None,
                    "history": history}}
    model.eval()
    with building_dir(Path(config.out)) as tmp:
        model.save(tmp)
        write_json(tmp / TRAIN_MANIFEST, manifest)
    return manifest


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


def _step_loss(model: CitrecModel, loss_fn: Any, batch: list[tuple[Location, str]],
               contexts: PaperContexts, positives: PositiveSampler,
               negatives: NegativeSampler, config: CitrecConfig, rng: random.Random) -> Any:
    """The loss of one batch of (location, target) examples."""
    import torch

    manuscripts, papers, extra, negative = [], [], [], []
    for location, target in batch:
        manuscripts.append(manuscript_context(location.sentences, location.at,
                                              config.manuscript_supplemental, rng))
        chosen = positives.sample(target, config.positives, rng,
                                  exclude={target, location.citing_id})
        extra.append(chosen)
        negative.append(negatives.sample(config.negatives, rng,
                                         exclude={*location.cited, *chosen, location.citing_id}))
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
    return loss_fn(source, target, positive, negative_vectors, mask)


def load_citrec_config(path: Path | None = None, **overrides: Any) -> CitrecConfig:
    """A :class:`CitrecConfig` from a TOML / YAML file (or none) with ``overrides`` (those
    not None) on top; unknown keys and wrong types name the file and key."""
    from openmsd.models.train_config import ConfigError, read_file

    values: dict[str, Any] = {}
    where = str(path) if path else "options"
    if path is not None:
        try:
            values = read_file(path)
        except ConfigError as error:
            raise CitrecConfigError(str(error)) from None
        values.pop("recipe", None)
    values.update({k: v for k, v in overrides.items() if v is not None})
    known = {f.name: f.type for f in dataclasses.fields(CitrecConfig)}
    for key, value in values.items():
        if key not in known:
            raise CitrecConfigError(f"{where}: unknown key {key!r}; known keys: "
                                    f"{', '.join(sorted(known))}")
        kind = str(known[key]).replace(" | None", "")
        ok = {"int": isinstance(value, int) and not isinstance(value, bool),
              "float": isinstance(value, int | float) and not isinstance(value, bool),
              "bool": isinstance(value, bool), "str": isinstance(value, str)}.get(kind, True)
        if value is not None and not ok:
            raise CitrecConfigError(f"{where}: key {key!r}: expected {kind}, got "
                                    f"{type(value).__name__} {value!r}")
    missing = [k for k in ("corpus", "out") if k not in values]
    if missing:
        raise CitrecConfigError(f"{where}: missing key(s) {', '.join(missing)}")
    try:
        return CitrecConfig(**values)
    except CitrecConfigError as error:
        raise CitrecConfigError(f"{where}: {error}") from None
