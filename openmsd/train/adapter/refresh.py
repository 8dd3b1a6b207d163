"""Keeping a corpus's adapters current: after ``openmsd update`` grew the graph, each adapter
trained on an earlier build of the corpus is trained again with its own settings (seconds).

The relations are derived again first (with the settings ``relations.json`` records) when they
are of an earlier build, and the papers new to a base are embedded by it (only those: the
others' vectors are current), so the adapter learns from the grown graph and maps every paper.
"""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

from openmsd.corpus import Corpus
from openmsd.models import (
    AdapterError,
    corpus_adapters,
    embed_corpus,
    load_model,
    read_adapter,
)
from openmsd.relations import (
    RelationsConfig,
    RelationsError,
    SplitConfig,
    connect,
    derive,
)
from openmsd.relations import read_manifest as relations_manifest
from openmsd.train.adapter.run import AdapterConfig, Progress, train_adapter
from openmsd.train.adapter.selection import Evaluator

__all__ = ["refresh_adapters", "stale_adapters"]


def stale_adapters(corpus: Corpus) -> list[Any]:
    """The readable adapters of ``corpus`` (``CORPUS/adapters``) trained on another build."""
    build = corpus.check().get("build", {}).get("id")
    root = corpus_adapters(corpus)
    out = []
    for directory in sorted(root.iterdir()) if root.is_dir() else []:
        if directory.name.startswith("."):
            continue
        try:
            adapter = read_adapter(directory)
        except AdapterError:
            continue
        if adapter.meta.get("corpus", {}).get("build") != build:
            out.append(adapter)
    return out


def _relations_config(recorded: dict[str, Any]) -> RelationsConfig:
    split = dict(recorded.get("split", {}))
    split["drop_en_en"] = tuple(split.get("drop_en_en", ("odt",)))
    names = {f.name for f in fields(RelationsConfig)} - {"split"}
    return RelationsConfig(split=SplitConfig(**split),
                           **{k: v for k, v in recorded.items() if k in names})


def refresh_adapters(corpus: Corpus, evaluator: Evaluator,
                     progress: Progress | None = None) -> list[dict[str, Any]]:
    """Train again every adapter of ``corpus`` trained on an earlier build; returns their
    manifests (none when every adapter is current)."""
    stale = stale_adapters(corpus)
    if not stale:
        return []
    try:
        relations_manifest(corpus)
    except RelationsError:  # of an earlier build: derived again, as they were
        recorded = corpus.layout.relations_manifest
        config = _relations_config(json.loads(recorded.read_text())["config"]) \
            if recorded.is_file() else RelationsConfig()
        engine = connect("duckdb")
        try:
            derive(corpus, engine, config)
        finally:
            engine.close()
    done = []
    for adapter in stale:
        for base in adapter.bases:  # the papers new to a base (the others are current)
            embed_corpus(corpus, load_model(base["model"], base["backend"]), base["key"])
        settings = adapter.meta.get("training", {}).get("settings", {})
        known = {f.name for f in fields(AdapterConfig)}
        config = AdapterConfig(**{**{k: v for k, v in settings.items() if k in known},
                                  "corpus": str(corpus.root), "out": str(adapter.path)})
        done.append(train_adapter(config, evaluator, progress))
    return done
