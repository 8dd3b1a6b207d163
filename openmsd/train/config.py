"""Training configuration: one validated file (TOML or YAML) per experiment.

A run is described by :class:`TrainConfig`; ``openmsd train RECIPE CORPUS --base M --out DIR``
builds one from its options, ``--config FILE`` reads one (options given on the command line
win). Unknown keys, wrong types and impossible values are errors naming the file and key,
raised before any training starts. The config used is saved beside the model
(``openmsd_train.json``) with the data fingerprint and the metrics.

>>> TrainConfig(recipe="mspt", corpus="c", out="m").positives
'dc'
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from openmsd.corpus import parse_variant
from openmsd.relations import parse

RECIPES = ("pretrain-cl", "mspt", "specter", "scincl")
LOSSES = ("contrastive", "triplet")
C = TypeVar("C")


class ConfigError(ValueError):
    """A configuration that cannot be trained: the message names the file and key."""


@dataclass
class TrainConfig:
    """One training run. Defaults follow OpenMSD §4–5 scaled to one CPU machine."""

    recipe: str
    corpus: str
    out: str
    base: str = "e5-small-multilingual"
    positives: str = "dc"
    """mspt: a positive set of :mod:`openmsd.relations.positives` (dc, cc, bc, dc-or-cc, ...)."""
    loss: str | None = None
    """contrastive (equation 1, in-batch negatives) or triplet (equation 2, the hinge loss);
    default: triplet for specter, contrastive otherwise."""
    temperature: float = 0.05
    margin: float = 1.0
    negatives: bool = True
    """Add each example's hard negative (Specter / SciNCL) as an extra column."""
    batch_size: int = 32
    mini_batch_size: int | None = None
    """GradCache: encode the batch this many texts at a time (memory of a small batch, the
    in-batch negatives of a large one); None: no caching."""
    learning_rate: float = 2e-5
    warmup_steps: int = 10
    max_steps: int = 100
    eval_steps: int = 25
    max_seq_length: int = 256
    freeze_embeddings: bool = False
    """Keep the word-embedding matrix fixed (e5: 96M of its 118M parameters sit in a 250k-token
    vocabulary; freezing them makes a CPU step several times cheaper and suits small data)."""
    seed: int = 0
    snippet_min: int = 10
    snippet_max: int = 256
    snippets_per_paper: int = 2
    dev_split: str = "dev"
    enrich: str | None = None
    """Train (and select on dev) with each non-English paper's English summary of this
    variant (``author64``, ``topn128``, ``llm64``: ``openmsd enrich``) in its text."""
    device: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """Free-form notes kept with the model (ignored by training)."""

    def __post_init__(self) -> None:
        if self.recipe not in RECIPES:
            raise ConfigError(f"recipe: unknown recipe {self.recipe!r}: expected one of "
                              f"{', '.join(RECIPES)}")
        if self.loss is None:
            self.loss = "triplet" if self.recipe == "specter" else "contrastive"
        if self.loss not in LOSSES:
            raise ConfigError(f"loss: unknown loss {self.loss!r}: expected one of "
                              f"{', '.join(LOSSES)}")
        for name in ("batch_size", "max_steps", "eval_steps", "max_seq_length",
                     "snippet_min", "snippet_max", "snippets_per_paper"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: must be at least 1, got {getattr(self, name)}")
        if self.loss == "contrastive" and self.batch_size < 2:
            raise ConfigError("batch_size: in-batch negatives need at least 2 examples a batch")
        if self.mini_batch_size is not None and self.mini_batch_size < 1:
            raise ConfigError(f"mini_batch_size: must be at least 1, got {self.mini_batch_size}")
        if self.temperature <= 0:
            raise ConfigError(f"temperature: must be positive, got {self.temperature}")
        if self.snippet_min > self.snippet_max:
            raise ConfigError(f"snippet_min {self.snippet_min} > snippet_max {self.snippet_max}")
        if self.enrich is not None:
            try:
                parse_variant(self.enrich)
            except ValueError as error:
                raise ConfigError(f"enrich: {error}") from None
        if self.recipe == "mspt":
            try:
                parse(self.positives)
            except ValueError as error:
                raise ConfigError(f"positives: {error}") from None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def replace(self, **changes: Any) -> TrainConfig:
        return dataclasses.replace(self, **changes)


def _types(kind: type = TrainConfig) -> dict[str, Any]:
    return {f.name: f.type for f in fields(kind)}


def read_file(path: Path) -> dict[str, Any]:
    """The mapping in a TOML (``.toml``) or YAML (``.yaml``, ``.yml``) file."""
    if not path.is_file():
        raise ConfigError(f"{path}: no such file")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".toml":
            data = tomllib.loads(text)
        elif path.suffix in (".yaml", ".yml"):
            import yaml  # optional: the models extra

            data = yaml.safe_load(text) or {}
        else:
            raise ConfigError(f"{path}: expected a .toml, .yaml or .yml file")
    except (tomllib.TOMLDecodeError, ValueError) as error:
        if isinstance(error, ConfigError):
            raise
        raise ConfigError(f"{path}: not valid {path.suffix[1:].upper()}: {error}") from None
    except Exception as error:  # yaml.YAMLError and its subclasses
        raise ConfigError(f"{path}: not valid YAML: {error}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of keys to values at the top")
    return data


def check_keys(values: dict[str, Any], where: str, allowed: set[str] | None = None,
               kind: type = TrainConfig) -> None:
    """Unknown keys and values of the wrong type (for the dataclass ``kind``'s fields) are
    errors naming ``where`` and the key."""
    types = _types(kind)
    allowed = allowed if allowed is not None else set(types)
    for key, value in values.items():
        if key not in allowed:
            raise ConfigError(f"{where}: unknown key {key!r}; known keys: "
                              f"{', '.join(sorted(allowed))}")
        expected = str(types.get(key, ""))
        if value is None:
            continue
        ok = {"int": isinstance(value, int) and not isinstance(value, bool),
              "float": isinstance(value, int | float) and not isinstance(value, bool),
              "bool": isinstance(value, bool), "str": isinstance(value, str),
              "dict[str, Any]": isinstance(value, dict)}
        base = expected.replace(" | None", "")
        if base in ok and not ok[base]:
            raise ConfigError(f"{where}: key {key!r}: expected {base}, got "
                              f"{type(value).__name__} {value!r}")


def config_from(kind: type[C], path: Path | None, required: tuple[str, ...],
                ignored: tuple[str, ...] = (), **overrides: Any) -> C:
    """A ``kind`` (:class:`TrainConfig`, :class:`~openmsd.train.citrec.train.CitrecConfig`)
    from the TOML / YAML file ``path`` (or none), with ``overrides`` (not None) on top;
    ``ignored`` keys of the file are dropped. Unknown keys, wrong types, missing
    ``required`` keys and impossible values are :class:`ConfigError` naming the file (or
    "options") and the key."""
    where = str(path) if path is not None else "options"
    values = read_file(path) if path is not None else {}
    for key in ignored:
        values.pop(key, None)
    check_keys(values, where, kind=kind)
    values.update({k: v for k, v in overrides.items() if v is not None})
    check_keys(values, where, kind=kind)
    missing = [k for k in required if k not in values]
    if missing:
        raise ConfigError(f"{where}: missing key(s) {', '.join(missing)}")
    try:
        return kind(**values)
    except ConfigError as error:
        raise ConfigError(f"{where}: {error}") from None
