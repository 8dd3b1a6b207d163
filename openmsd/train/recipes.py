"""``openmsd train RECIPE CORPUS --base M --out DIR``: the training recipes of OpenMSD.

* ``pretrain-cl`` — contrastive loss with in-batch negatives (equation 1) on snippet pairs;
* ``mspt`` — multilingual Specter: positives of any relation set, Specter's hard negatives,
  equation 1 (or the hinge triplet loss, equation 2, with ``loss = "triplet"``);
* ``specter`` — the original recipe: DC positives, Specter negatives, equation 2;
* ``scincl`` — positives and negatives from the citation-graph embedding neighbours.

All run on sentence-transformers' trainer: inverse-square-root learning-rate decay after a
linear warm-up, evaluation on the dev split every ``eval_steps`` (SDSM MAP: the caller builds
the evaluator, :func:`openmsd.experiment.dev.dev_evaluator`) with the best checkpoint kept,
GradCache (``CachedMultipleNegativesRankingLoss``) when ``mini_batch_size`` is set, resumable
from the checkpoints in ``DIR.checkpoints/``. The result is a SentenceTransformer directory (written
whole, then moved into place) with ``openmsd_train.json``: the config, the data fingerprint
and the metrics. Equation 1 is sentence-transformers' ``MultipleNegativesRankingLoss`` with
dot-product similarity and scale 1/temperature; equation 2 is its ``TripletLoss`` with
Euclidean distance and the margin.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openmsd.corpus import Corpus, parse_variant, variant_summaries
from openmsd.io import building_dir, write_json
from openmsd.models import UnknownModelError, prompts
from openmsd.models import base_path as registered_base_path
from openmsd.train.config import ConfigError, TrainConfig
from openmsd.train.data import (
    Examples,
    TrainingDataError,
    relation_examples,
    snippet_pairs,
    triple_examples,
)

MANIFEST = "openmsd_train.json"


def base_path(name: str) -> str:
    """The SentenceTransformer directory or hub name of a trainable base model
    (:func:`openmsd.models.registry.base_path`); ConfigError naming ``base`` otherwise."""
    try:
        return registered_base_path(name)
    except UnknownModelError as error:
        raise ConfigError(f"base: {error}") from None


def load_base(config: TrainConfig) -> Any:
    """The base SentenceTransformer, with its prompts set (and its word embeddings frozen if
    asked); ConfigError if it cannot load."""
    # optional: the models extra (torch ~2.8 s, sentence_transformers ~14.1 s)
    import torch
    from sentence_transformers import SentenceTransformer

    path = base_path(config.base)
    try:
        model = SentenceTransformer(path, device=config.device)
    except Exception as error:  # OSError, ValueError, hub errors: all mean "cannot load"
        raise ConfigError(f"base: cannot load {config.base!r} ({error})") from None
    model.inference_max_seq_length = model.max_seq_length  # restored before saving
    model.max_seq_length = config.max_seq_length
    if config.freeze_embeddings:
        for module in model.modules():
            if isinstance(module, torch.nn.Embedding) and module.num_embeddings > 1000:
                module.weight.requires_grad_(False)
    model.prompts = prompts(config.base) or dict(model.prompts or {})
    return model


def summaries(config: TrainConfig) -> dict[str, str]:
    """The English summaries ``config.enrich`` names, by paper id (none without it);
    ConfigError when the corpus has none of that variant or the recipe reads no paper text."""
    if config.enrich is None:
        return {}
    if config.recipe == "pretrain-cl":
        raise ConfigError("enrich: pretrain-cl trains on snippets of a paper's own text, not "
                          "on title and abstract")
    try:
        return variant_summaries(Corpus(config.corpus), *parse_variant(config.enrich))
    except FileNotFoundError as error:
        raise ConfigError(f"enrich: {error}") from None


def examples(config: TrainConfig, model: Any, enriched: dict[str, str] | None = None
             ) -> Examples:
    """The training examples of ``config.recipe`` (texts enriched with ``enriched``)."""
    corpus = Corpus(config.corpus)
    corpus.check()
    if config.recipe == "pretrain-cl":
        tokenizer = model.tokenizer
        return snippet_pairs(corpus, tokenizer.tokenize, tokenizer.convert_tokens_to_string,
                             config.snippet_min, config.snippet_max, config.snippets_per_paper,
                             config.seed)
    if config.recipe == "mspt":
        return relation_examples(corpus, config.positives, config.negatives, seed=config.seed,
                                 summaries=enriched)
    return triple_examples(corpus, config.recipe, config.negatives, summaries=enriched)


def make_loss(config: TrainConfig, model: Any) -> Any:
    """Equation 1 (contrastive, optionally cached) or equation 2 (hinge triplet)."""
    # optional: the models extra; sentence_transformers takes ~14.1 s to import
    from sentence_transformers import util
    from sentence_transformers.sentence_transformer import losses

    if config.loss == "triplet":
        return losses.TripletLoss(model, losses.TripletDistanceMetric.EUCLIDEAN,
                                  triplet_margin=config.margin)
    if config.mini_batch_size:
        return losses.CachedMultipleNegativesRankingLoss(
            model, scale=1 / config.temperature, similarity_fct=util.dot_score,
            mini_batch_size=config.mini_batch_size)
    return losses.MultipleNegativesRankingLoss(model, scale=1 / config.temperature,
                                               similarity_fct=util.dot_score)


def fingerprint(config: TrainConfig, data: Examples) -> dict[str, Any]:
    """What the model was trained on: the corpus build, the relations manifest, a digest of
    the examples."""
    corpus = Corpus(config.corpus)
    relations = corpus.layout.relations_manifest
    digest = hashlib.sha256()
    for column in data.table.column_names:
        for text in data.table[column].to_pylist():
            digest.update(text.encode())
    return {"corpus_build": corpus.check()["build"]["id"],
            "relations": hashlib.sha256(relations.read_bytes()).hexdigest()[:16]
            if relations.exists() else None,
            "examples": data.table.num_rows, "examples_sha256": digest.hexdigest()[:16],
            "left_out": data.left_out}


def _check(config: TrainConfig, data: Examples) -> None:
    if data.table.num_rows == 0:
        raise TrainingDataError(f"{config.corpus}: no training example for recipe "
                                f"{config.recipe!r} (left out: {data.left_out})")
    if config.loss == "triplet" and "negative" not in data.table.column_names:
        raise ConfigError("loss: the triplet loss needs negatives (negatives = true)")
    if config.loss == "triplet" and config.mini_batch_size:
        raise ConfigError("mini_batch_size: the cached (GradCache) loss is contrastive only")


def _at_length(evaluator: Any, model: Any, length: int) -> dict[str, float]:
    """``evaluator(model)`` with inputs cut at ``length`` tokens (the length the model is used
    at, not the shorter one it trains at), the model's own length restored after."""
    training_length, model.max_seq_length = model.max_seq_length, length
    try:
        return evaluator(model)
    finally:
        model.max_seq_length = training_length


def train(config: TrainConfig, evaluator: Callable[[Any], Any], resume: bool = True
          ) -> dict[str, Any]:
    """Train as ``config`` says and write the model to ``config.out``; the manifest written
    beside it. ``evaluator``: the caller's builder of the dev evaluator for the loaded base
    model (a sentence-transformers evaluator whose primary metric is ``dev_MAP``, run every
    ``eval_steps`` to keep the best checkpoint). Everything that can be checked is checked
    before the first step."""
    # optional: the models extra (datasets ~1.0 s, sentence_transformers ~14.1 s)
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.training_args import BatchSamplers

    enriched = summaries(config)
    model = load_base(config)
    data = examples(config, model, enriched)
    _check(config, data)
    evaluator = evaluator(model)
    out = Path(config.out)
    checkpoints = out.with_name(out.name + ".checkpoints")
    args = SentenceTransformerTrainingArguments(
        output_dir=str(checkpoints), max_steps=config.max_steps,
        per_device_train_batch_size=config.batch_size, learning_rate=config.learning_rate,
        warmup_steps=config.warmup_steps, lr_scheduler_type="inverse_sqrt",
        eval_strategy="steps", eval_steps=config.eval_steps, save_strategy="steps",
        save_steps=config.eval_steps, metric_for_best_model="eval_dev_MAP",
        greater_is_better=True, seed=config.seed,
        data_seed=config.seed, logging_steps=max(1, config.eval_steps // 5),
        report_to="none", prompts=model.prompts.get("passage") or None,
        batch_sampler=BatchSamplers.NO_DUPLICATES, dataloader_drop_last=False,
        use_cpu=config.device == "cpu", disable_tqdm=False)
    trainer = SentenceTransformerTrainer(
        model=model, args=args, train_dataset=Dataset.from_dict(data.table.to_pydict()),
        loss=make_loss(config, model), evaluator=evaluator)
    last = _last_checkpoint(checkpoints) if resume else None
    before = _at_length(evaluator, model, model.inference_max_seq_length)
    start = time.perf_counter()
    output = trainer.train(resume_from_checkpoint=last)
    seconds = time.perf_counter() - start
    inference_length = model.inference_max_seq_length
    if trainer.state.best_model_checkpoint:  # each checkpoint is a SentenceTransformer directory
        saved_prompts = model.prompts
        model = SentenceTransformer(trainer.state.best_model_checkpoint, device=config.device)
        model.prompts = saved_prompts
    # trained on max_seq_length tokens for speed; used on whole papers, as the base model is
    model.max_seq_length = inference_length
    history = [{k: v for k, v in row.items() if k in ("step", "loss", "eval_dev_MAP",
                                                      "eval_dev_nDCG@10", "learning_rate")}
               for row in trainer.state.log_history]
    best = evaluator(model)
    manifest = {"config": config.as_dict(), "data": fingerprint(config, data),
                "resumed_from": last, "metrics": {
                    "dev_before": before, "dev_best": best,
                    "best_checkpoint": trainer.state.best_model_checkpoint,
                    "train_loss": output.training_loss, "train_seconds": round(seconds, 1),
                    "examples_per_second": round(output.metrics.get("train_samples_per_second",
                                                                    0.0), 3),
                    "steps": trainer.state.global_step, "history": history}}
    with building_dir(out) as tmp:
        model.save(str(tmp))
        write_json(tmp / MANIFEST, manifest)
    shutil.rmtree(checkpoints, ignore_errors=True)
    return manifest


def _last_checkpoint(directory: Path) -> str | None:
    """The newest complete checkpoint of an interrupted run, if any."""
    if not directory.is_dir():
        return None
    done = [p for p in directory.glob("checkpoint-*") if (p / "trainer_state.json").exists()]
    if not done:
        return None
    return str(max(done, key=lambda p: int(p.name.split("-")[1])))


def read_manifest(model_dir: Path) -> dict[str, Any]:
    """The ``openmsd_train.json`` of a trained model directory."""
    return json.loads((model_dir / MANIFEST).read_text())
