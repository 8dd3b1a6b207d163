"""``openmsd train``, ``openmsd experiment`` and ``openmsd tune``: fitting models and rankers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import orjson
import typer

from openmsd.cli.options import DEFAULT_MODEL, JsonOpt
from openmsd.cli.output import emit, err, fail, out, progress

__all__ = ["app"]

app = typer.Typer()


@app.command("train")
def train_command(
    recipe: Annotated[str, typer.Argument(help="ranker (what related, search and recommend "
                                              "rank with, learned from the corpus's links: "
                                              "docs/guides/fusion-and-tuning.md), adapter (a "
                                              "small head over stored vectors, in seconds: "
                                              "docs/guides/adapters.md), pretrain-cl, mspt, "
                                              "specter, scincl, citrec (MP-BERT4CR, see "
                                              "docs/citrec.md) or citrec-prefetch (recommend's "
                                              "first stage, learned from the corpus's citation "
                                              "contexts).")],
    corpus: Annotated[Path, typer.Argument(help="A corpus with relations.")],
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="The model directory to write (adapter: default "
                      "CORPUS/adapters/adapter-BASE, where hybrid finds it).")] = None,
    base: Annotated[list[str] | None, typer.Option(
        help=f"The model to start from (default {DEFAULT_MODEL}); adapter: repeat it to "
             "concatenate several models' stored vectors (MODEL@onnx names a backend).")]
    = None,
    config: Annotated[Path | None, typer.Option(help="A TOML/YAML file of training settings "
                                                     "(options given here win).")] = None,
    positives: Annotated[str | None, typer.Option(help="mspt: dc, cc, bc, dc-or-cc, "
                                                       "dc-and-cc, ...")] = None,
    loss: Annotated[str | None, typer.Option(help="contrastive (eq. 1) or triplet (eq. 2).")]
    = None,
    steps: Annotated[int | None, typer.Option(help="Training steps.")] = None,
    batch_size: Annotated[int | None, typer.Option(help="Examples a step.")] = None,
    mini_batch_size: Annotated[int | None, typer.Option(
        help="GradCache: encode this many texts at a time.")] = None,
    learning_rate: Annotated[float | None, typer.Option(help="Peak learning rate.")] = None,
    eval_steps: Annotated[int | None, typer.Option(help="Dev evaluation every N steps.")]
    = None,
    seed: Annotated[int | None, typer.Option(help="Seed.")] = None,
    epochs: Annotated[int | None, typer.Option(help="citrec: passes over the examples.")]
    = None,
    dynamic_sampling: Annotated[bool | None, typer.Option(
        "--dynamic-sampling/--no-dynamic-sampling",
        help="citrec: supplemental contexts (off: the ablation).")] = None,
    outside_references: Annotated[bool | None, typer.Option(
        "--outside-references", help="citrec: references outside the corpus are candidates "
        "too (their title or raw string).")] = None,
    also: Annotated[list[Path] | None, typer.Option(
        "--also", help="citrec: another corpus to train on (repeatable): its training "
        "locations join training, its dev ones model selection.")] = None,
    train_encoder: Annotated[bool | None, typer.Option(
        "--train-encoder", help="citrec: fine-tune the transformer too (a GPU's setting; "
        "default: frozen, its sentence vectors cached, the heads trained).")] = None,
    enrich: Annotated[str | None, typer.Option(
        help="Train on text enriched with these English summaries (author64, topn128, "
             "llm64...: 'openmsd enrich').")] = None,
    head: Annotated[list[str] | None, typer.Option(
        help="adapter: linear (identity-initialised) or low-rank (a residual); repeat it to "
             "let cross-validation choose.")] = None,
    pull: Annotated[list[float] | None, typer.Option(
        help="adapter: weight of the pull toward the identity, ‖W − I‖² (repeatable; "
             "default 0.03, 0.1 and 0.3).")] = None,
    extra: Annotated[list[str] | None, typer.Option(
        help="adapter: also learn from specter (hard negatives) or scincl (graph "
             "neighbours) triples.")] = None,
    folds: Annotated[int | None, typer.Option(
        help="adapter, ranker: folds of the cross-validation over train links (default 5).")]
    = None,
    adapters: Annotated[bool, typer.Option(
        "--adapters/--no-adapters", help="ranker: first train an adapter for each dense model "
        "without one (each kept only where it wins out of fold).")] = True,
    contexts: Annotated[bool, typer.Option(
        "--contexts/--no-contexts", help="ranker: also learn recommend's first stage from the "
        "corpus's citation contexts, where it has them ('train citrec-prefetch'; "
        "--no-contexts leaves that stage as it is).")] = True,
    json: JsonOpt = False,
) -> None:
    """Train a SentenceTransformer with one of OpenMSD's recipes; the best checkpoint on dev
    MAP is written to --out with openmsd_train.json (config, data fingerprint, metrics).

    citrec trains MP-BERT4CR (--loss triplet, mpt-tgt, mpt-src or mpt-src-tgt). adapter
    trains a small head over the corpus's stored vectors, chosen by cross-validation on the
    train split (never worse than the base out of fold), and stores the adapted vectors."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.experiment import train_model
    from openmsd.train import TRAIN_ERRORS, describe, load_config

    if recipe == "ranker":
        _train_ranker(corpus, seed, folds, json, adapters, contexts)
        return
    if base is not None and len(base) > 1 and recipe != "adapter":
        fail(f"train {recipe}: one --base only (several concatenate only for 'train adapter')")
    if recipe == "citrec-prefetch":
        _train_citrec_prefetch(corpus, base, folds, seed, json)
        return
    if recipe == "adapter":
        _train_adapter(corpus, out_dir, base, positives, head, pull, extra, folds, epochs,
                       batch_size, learning_rate, seed, json)
        return
    if out_dir is None:
        fail(f"train {recipe}: --out DIR is required")
    options = {"recipe": recipe, "corpus": str(corpus), "out": str(out_dir),
               "base": base[0] if base else None,
               "positives": positives, "loss": loss, "max_steps": steps,
               "batch_size": batch_size, "mini_batch_size": mini_batch_size,
               "learning_rate": learning_rate, "eval_steps": eval_steps, "seed": seed,
               "enrich": enrich, "epochs": epochs, "dynamic_sampling": dynamic_sampling,
               "outside_references": outside_references, "train_encoder": train_encoder,
               "also": [str(p) for p in also] if also else None}
    try:
        manifest = train_model(load_config(config, **options))
    except TRAIN_ERRORS as error:
        fail(str(error))
    emit(manifest, json, describe)


def _train_adapter(corpus: Path, out_dir: Path | None, base: list[str] | None,
                   positives: str | None, head: list[str] | None, pull: list[float] | None,
                   extra: list[str] | None, folds: int | None, epochs: int | None,
                   batch_size: int | None, learning_rate: float | None, seed: int | None,
                   json: bool) -> None:
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import Corpus, CorpusError
    from openmsd.eval import sdsm_per_query
    from openmsd.experiment import adapter_line
    from openmsd.index import build_index
    from openmsd.models import AdapterError
    from openmsd.rank import RankerSpec
    from openmsd.train import AdapterConfig, AdapterDataError, train_adapter

    given = {"bases": base, "out": str(out_dir) if out_dir else None, "positives": positives,
             "heads": head, "pulls": pull, "extras": extra, "folds": folds, "epochs": epochs,
             "batch_size": batch_size, "learning_rate": learning_rate, "seed": seed}
    config = AdapterConfig(str(corpus), **{k: v for k, v in given.items() if v is not None})
    try:
        for name in base or []:
            RankerSpec.parse(name, typed=True)  # MODEL@onnx, the old spelling, is said
        with progress() as start:
            manifest = train_adapter(config, sdsm_per_query, start)
        # indexed at once: related, search and watch use the adapter straight away
        built, _ = build_index(Corpus(corpus), manifest["name"])
        manifest["indexed"] = built.index.ntotal
    except (AdapterDataError, AdapterError, CorpusError, ValueError) as error:
        fail(str(error))
    emit(manifest, json, adapter_line)


def _train_citrec_prefetch(corpus: Path, base: list[str] | None, folds: int | None,
                           seed: int | None, json: bool) -> None:
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import Corpus, CorpusError
    from openmsd.experiment import prefetch_line
    from openmsd.models import UnknownModelError
    from openmsd.train import PrefetchConfig, train_prefetch_head

    config = PrefetchConfig(model=base[0] if base else None, folds=folds or 5, seed=seed or 0)
    try:
        target = Corpus(corpus)
        target.check()
        with progress() as start:
            report = train_prefetch_head(target, config, start)
    except (CorpusError, UnknownModelError, ValueError) as error:
        fail(str(error))
    emit(report, json, prefetch_line)


def _train_ranker(corpus: Path, seed: int | None, folds: int | None, json: bool,
                  adapters: bool = True, contexts: bool = True) -> None:
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import Corpus, CorpusError
    from openmsd.eval import SDSMError
    from openmsd.experiment import TuneError, ranker_lines, train_ranker
    from openmsd.models import AdapterError
    from openmsd.rank import UnknownScorerError, ranker_path

    try:
        with progress() as start:
            found = train_ranker(Corpus(corpus), seed or 0, folds or 5, progress=start,
                                 adapters=adapters, contexts=contexts)
    except (TuneError, SDSMError, CorpusError, FileNotFoundError, UnknownScorerError,
            AdapterError) as error:
        fail(str(error))
    found["path"] = str(ranker_path(Corpus(corpus)))
    emit(found, json, ranker_lines)


@app.command("experiment")
def experiment_command(
    config: Annotated[Path, typer.Argument(help="The experiment file (TOML or YAML).")],
    json: JsonOpt = False,
) -> None:
    """Train and evaluate a grid of recipes × positive sets × seeds; write results.json and
    results.md (OpenMSD Tables 5/6 layout) into the experiment's out directory."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.experiment import load_experiment, run_experiment
    from openmsd.train import TRAIN_ERRORS

    try:
        experiment = load_experiment(config)
        run_experiment(experiment, log=lambda m: err.print(m, highlight=False))
    except TRAIN_ERRORS as error:
        fail(str(error))
    if json:
        emit(orjson.loads((experiment.out / "results.json").read_bytes()), True)
        return
    out.print((experiment.out / "results.md").read_text(), highlight=False, markup=False)


@app.command()
def tune(
    corpus: Annotated[Path, typer.Argument(help="A corpus with relations ('openmsd relations') "
                                                "and vectors of its dense model.")],
    seed: Annotated[int, typer.Option(help="Seed of the folds and the hidden links.")] = 0,
    json: JsonOpt = False,
) -> None:
    """Another name for 'openmsd train ranker CORPUS': it runs that command."""
    err.print("openmsd tune runs 'openmsd train ranker CORPUS'", highlight=False)
    _train_ranker(corpus, seed, None, json)
