"""Vector keys: the name a model's vectors and index are stored under.

A key is the model and its backend (:func:`vector_key`: ``MODEL`` for PyTorch, ``MODEL@onnx``
for another backend; a ranker name writes ``MODEL:onnx``), made a directory name by
:func:`model_slug`. The backends a key can name are :data:`BACKENDS`; what each one is, and
which is a model's default, is the model registry's (:mod:`openmsd.models.registry`).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

__all__ = ["ADAPTER_FILE", "BACKENDS", "model_name", "model_slug", "split_vector_key",
           "vector_key"]

#: The backends a vector key can name: PyTorch, the ONNX Runtime builds (int8, 4-bit, int8 per
#: token, float32) and PyTorch float16 on a CUDA GPU.
BACKENDS = ("torch", "onnx", "onnx-q4", "onnx-sq8", "onnx-fp32", "cuda-fp16")
#: The file that makes a directory an adapter; its ``name`` names the adapter's vectors.
ADAPTER_FILE = "adapter.json"


def model_slug(name: str) -> str:
    """A directory name for a model: its registry name, an adapter directory's name (the
    ``name`` in its ``adapter.json``: the same vectors however the directory is written), or a
    readable hash of a path or hub name."""
    if "/" in name or "\\" in name:
        adapter = Path(name) / ADAPTER_FILE
        if adapter.is_file():
            try:
                named = json.loads(adapter.read_text(encoding="utf-8")).get("name")
            except (ValueError, OSError, AttributeError):
                named = None
            if isinstance(named, str) and re.fullmatch(r"[A-Za-z0-9._-]+", named):
                return named
    if re.fullmatch(r"[A-Za-z0-9._+@-]+", name):  # '+': enriched, MODEL+llm64; '@': backend
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:10]
    tail = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(name).name or name).strip("-")
    return f"{tail}-{digest}"


def vector_key(model: str, backend: str = "torch") -> str:
    """The name a model's vectors and index are stored under for a backend.

    >>> vector_key("e5-small-multilingual"), vector_key("e5-small-multilingual", "onnx")
    ('e5-small-multilingual', 'e5-small-multilingual@onnx')
    """
    return model if backend == "torch" else f"{model}@{backend}"


def split_vector_key(key: str) -> tuple[str, str | None]:
    """``(model, backend)`` of a :func:`vector_key` (``MODEL@onnx``, or ``MODEL:onnx`` as a
    ranker name writes it); the backend is None where the key names none.

    >>> split_vector_key("minilm-en@onnx"), split_vector_key("minilm-en:torch")
    (('minilm-en', 'onnx'), ('minilm-en', 'torch'))
    >>> split_vector_key("e5-small-multilingual+llm64")
    ('e5-small-multilingual+llm64', None)
    """
    for mark in ("@", ":"):
        model, sep, backend = key.rpartition(mark)
        if sep and model and backend in BACKENDS:
            return model, backend
    return key, None


def model_name(key: str) -> str:
    """The model of a :func:`vector_key` (the key without its backend)."""
    return split_vector_key(key)[0]
