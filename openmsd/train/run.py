"""One entry point for every training recipe: its config read one way, the run dispatched by
the config's kind, the evaluator given by the caller.

>>> load_config(None, recipe="citrec", corpus="c", out="m").loss
'mpt-src-tgt'
>>> load_config(None, recipe="mspt", corpus="c", out="m").positives
'dc'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openmsd.corpus import CorpusError
from openmsd.rank import CitrecDataError
from openmsd.train import recipes
from openmsd.train.citrec import train as citrec
from openmsd.train.config import ConfigError, TrainConfig, config_from
from openmsd.train.data import TrainingDataError

#: What a training run raises for bad settings or data, before its first step.
TRAIN_ERRORS = (ConfigError, TrainingDataError, CitrecDataError, CorpusError)


def load_config(path: Path | None = None, **overrides: Any
                ) -> TrainConfig | citrec.CitrecConfig:
    """The config of a run: ``citrec`` (the ``recipe`` in ``overrides`` or the file) gives a
    :class:`~openmsd.train.citrec.train.CitrecConfig`, any other recipe a
    :class:`~openmsd.train.config.TrainConfig`; from the TOML / YAML file ``path`` (or none)
    with ``overrides`` (not None) on top."""
    if overrides.get("recipe") == "citrec":
        return citrec.load_citrec_config(path, **{k: v for k, v in overrides.items()
                                                  if k != "recipe"})
    return config_from(TrainConfig, path, ("recipe", "corpus", "out"), **overrides)


def run_recipe(config: TrainConfig | citrec.CitrecConfig, evaluator: Any,
               progress: bool = True) -> dict[str, Any]:
    """Train ``config``'s recipe and return its manifest. ``evaluator``, given by the caller:
    the builder of a SentenceTransformer recipe's dev evaluator (SDSM MAP,
    :func:`openmsd.train.recipes.train`); the prefetch ranker of ``citrec``
    (:data:`openmsd.train.citrec.train.Prefetch`)."""
    if isinstance(config, citrec.CitrecConfig):
        return citrec.train(config, evaluator, progress=progress)
    return recipes.train(config, evaluator)


def describe(manifest: dict[str, Any]) -> str:
    """One line on a finished run: steps, examples, and its dev figure or its loss."""
    metrics, data = manifest["metrics"], manifest["data"]
    out = manifest["config"]["out"]
    if "train_examples" in data:  # citrec
        return (f"{out}: {metrics['steps']} steps on {data['train_examples']:,} examples "
                f"({data['train_locations']:,} locations; {data['test_locations']:,} held "
                f"out), loss {metrics['first_loss']:.3f} → {metrics['last_loss']:.3f}, "
                f"{metrics['train_seconds']:.0f} s")
    return (f"{out}: {metrics['steps']} steps, {data['examples']:,} examples, "
            f"{metrics['examples_per_second']:.1f} examples/s; dev MAP "
            f"{metrics['dev_before']['dev_MAP']:.2f} → {metrics['dev_best']['dev_MAP']:.2f}")
