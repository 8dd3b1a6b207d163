"""An adapter: a small head over the stored vectors of one base model, or of several
concatenated, trained on a corpus's own citations (``openmsd train adapter``).

The head never re-encodes a paper: a paper's adapted vector is its stored base vector(s)
through the head; a free-text query is encoded by the base(s) (:class:`AdapterEncoder`), then
mapped. Several bases are concatenated (each vector unit length, the concatenation scaled to
unit length again) before the head.

An adapter directory holds::

    adapter.json        name, bases (model, backend, vector key, dim), head kind and shape,
                        training provenance (positive set, corpus build, data fingerprint, CV)
    head.safetensors    the head's tensors: ``weight`` (linear, d × d) or ``down`` (r × d) and
                        ``up`` (d × r) of a low-rank residual ``x + up(down(x))``
    folds.safetensors   (optional) per fold ``f`` of the cross-validation that chose the head,
                        the chosen head as fitted without that fold's links (tensors
                        ``f.weight`` …): what a ranker learns the adapter from, out of fold

Its model name (and vector key) is its ``name``; the one a corpus trains by default lives in
``CORPUS/adapters/NAME`` (:func:`corpus_adapters`), where the untuned ``hybrid`` finds it.

>>> import numpy as np
>>> head = Head("linear", {"weight": np.eye(2, dtype=np.float32) * 2})
>>> [round(float(v), 2) for v in head.apply(np.array([[3.0, 4.0]], np.float32))[0]]
[0.6, 0.8]
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from openmsd.artifact import ArtifactError
from openmsd.corpus import Corpus, corpus_lock
from openmsd.io import building_dir
from openmsd.models.encoder import Kind, normalise
from openmsd.vectors import (
    ADAPTER_FILE,
    model_name,
    split_vector_key,
    stored_backends,
    vectors_dir,
    write_part,
)

__all__ = ["FOLDS_FILE", "HEAD_FILE", "MAPPED_BY", "Adapter", "AdapterEncoder",
           "AdapterError", "BaseVectors", "Head", "base_vectors", "check_mapped", "concatenate",
           "corpus_adapters", "find_adapter", "head_digest", "map_corpus", "read_adapter",
           "read_fold_heads", "write_adapter"]

HEAD_FILE = "head.safetensors"
FOLDS_FILE = "folds.safetensors"
MAPPED_BY = "mapped-by.txt"
"""In an adapter's vectors directory: the :func:`head_digest` of the head that mapped them."""
HEAD_KINDS = ("identity", "linear", "low-rank")


class AdapterError(ArtifactError):
    """An adapter that cannot be read or applied: a corrupt directory, base vectors missing or
    of other papers or dimensions, adapted vectors of another head."""


@dataclass
class Head:
    """A head's kind and its tensors (float32 numpy arrays); :meth:`apply` maps rows."""

    kind: str
    tensors: dict[str, np.ndarray] = field(default_factory=dict)

    def matrix(self, dim: int) -> np.ndarray:
        """The ``dim × dim_out`` matrix rows are multiplied by (the identity for ``identity``)."""
        if self.kind == "identity":
            return np.eye(dim, dtype=np.float32)
        if self.kind == "linear":
            return np.ascontiguousarray(self.tensors["weight"].T, np.float32)
        down, up = self.tensors["down"], self.tensors["up"]
        return (np.eye(dim, dtype=np.float32) + down.T @ up.T).astype(np.float32)

    def apply(self, vectors: np.ndarray) -> np.ndarray:
        """Rows through the head, L2-normalised."""
        vectors = np.asarray(vectors, np.float32)
        if self.kind == "identity":
            return normalise(vectors)
        return normalise(vectors @ self.matrix(vectors.shape[1]))

    def shape(self) -> tuple[int, int] | None:
        """(dim in, dim out) of the head's tensors; None for the identity."""
        if self.kind == "linear":
            out, into = self.tensors["weight"].shape
            return int(into), int(out)
        if self.kind == "low-rank":
            return int(self.tensors["down"].shape[1]), int(self.tensors["up"].shape[0])
        return None


@dataclass
class Adapter:
    """A read adapter: where it is, its settings (``adapter.json``) and its head."""

    path: Path
    meta: dict[str, Any]
    head: Head

    @property
    def name(self) -> str:
        return str(self.meta["name"])

    @property
    def bases(self) -> list[dict[str, Any]]:
        """``[{"model", "backend", "key", "dim"}, ...]``, in concatenation order."""
        return list(self.meta["bases"])

    @property
    def dim(self) -> int:
        return sum(int(b["dim"]) for b in self.bases)

    def apply(self, vectors: np.ndarray) -> np.ndarray:
        return self.head.apply(vectors)


def _check_meta(path: Path, meta: Any) -> dict[str, Any]:
    where = path / ADAPTER_FILE
    if not isinstance(meta, dict):
        raise AdapterError(f"{where}: expected a JSON object")
    for key in ("name", "bases", "head"):
        if key not in meta:
            raise AdapterError(f"{where}: no {key!r} field; train it again with 'openmsd train "
                               "adapter'")
    bases = meta["bases"]
    if not isinstance(bases, list) or not bases or not all(
            isinstance(b, dict) and {"model", "backend", "key", "dim"} <= set(b) for b in bases):
        raise AdapterError(f"{where}: field 'bases': expected a list of {{model, backend, key, "
                           "dim}}")
    if not isinstance(meta["head"], dict) or meta["head"].get("kind") not in HEAD_KINDS:
        raise AdapterError(f"{where}: field 'head.kind': expected one of {', '.join(HEAD_KINDS)}")
    return meta


def read_adapter(path: str | Path) -> Adapter:
    """The adapter in directory ``path``; :class:`AdapterError` naming the file and what is
    wrong (missing, not JSON, tensors missing or of the wrong shape)."""
    path = Path(path)
    where = path / ADAPTER_FILE
    if not where.is_file():
        raise AdapterError(f"{path}: not an adapter directory (no {ADAPTER_FILE}); train one "
                           "with 'openmsd train adapter CORPUS --base MODEL'")
    try:
        meta = _check_meta(path, json.loads(where.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise AdapterError(f"{where}: not valid JSON ({error})") from None
    kind = meta["head"]["kind"]
    dim = sum(int(b["dim"]) for b in meta["bases"])
    tensors: dict[str, np.ndarray] = {}
    if kind != "identity":
        # optional: the models extra; safetensors takes ~0.3 s to import
        from safetensors import SafetensorError
        from safetensors.numpy import load_file

        weights = path / HEAD_FILE
        if not weights.is_file():
            raise AdapterError(f"{weights}: missing; train the adapter again")
        try:
            tensors = {k: np.asarray(v, np.float32) for k, v in load_file(str(weights)).items()}
        except (SafetensorError, OSError, ValueError) as error:
            raise AdapterError(f"{weights}: not a safetensors file ({error})") from None
        wanted = {"linear": {"weight": (dim, dim)},
                  "low-rank": {"down": (None, dim), "up": (dim, None)}}[kind]
        for key, shape in wanted.items():
            have = tensors.get(key)
            if have is None or have.ndim != 2 or any(
                    s is not None and s != h for s, h in zip(shape, have.shape, strict=True)):
                raise AdapterError(
                    f"{weights}: tensor {key!r} of shape "
                    f"{None if have is None else tuple(have.shape)}, expected "
                    f"{tuple('r' if s is None else s for s in shape)} for a {kind} head over "
                    f"{dim} dimensions")
        if kind == "low-rank" and tensors["down"].shape[0] != tensors["up"].shape[1]:
            raise AdapterError(f"{weights}: 'down' and 'up' disagree on the rank")
        for key, tensor in tensors.items():
            if not np.isfinite(tensor).all():
                raise AdapterError(f"{weights}: tensor {key!r} holds values that are not "
                                   f"finite (NaN or infinity); {_retrain(meta)}")
    return Adapter(path, meta, Head(kind, tensors))


def _retrain(meta: dict[str, Any]) -> str:
    """The command that trains an adapter again."""
    corpus = meta.get("corpus", {}).get("root") if isinstance(meta.get("corpus"), dict) else None
    return f"train it again with 'openmsd train adapter {corpus or 'CORPUS'}'"


def head_digest(adapter: Adapter) -> str:
    """A digest of what an adapter maps vectors with: its bases and its head's tensors."""
    digest = hashlib.sha256(json.dumps([adapter.bases, adapter.head.kind],
                                       sort_keys=True).encode())
    for key in sorted(adapter.head.tensors):
        digest.update(key.encode() + b"\0")
        digest.update(np.ascontiguousarray(adapter.head.tensors[key], np.float32).tobytes())
    return digest.hexdigest()[:16]


def check_mapped(corpus: Corpus, adapter: Adapter) -> None:
    """:class:`AdapterError` when the adapted vectors stored under the adapter's name were not
    mapped by its head (a run killed between writing the adapter and mapping its vectors, or
    a head replaced by hand): they would rank as another adapter does."""

    stamp = vectors_dir(corpus, adapter.name) / MAPPED_BY
    have = stamp.read_text(encoding="utf-8").strip() if stamp.is_file() else None
    if have != head_digest(adapter):
        raise AdapterError(f"{stamp.parent}: the adapted vectors of {adapter.name!r} were not "
                           f"mapped by the head in {adapter.path}; map them again with "
                           f"'openmsd embed {corpus.root} --model {adapter.name}'")


def write_adapter(path: str | Path, meta: dict[str, Any], head: Head,
                  folds: dict[int, Head] | None = None) -> Path:
    """Write an adapter directory atomically (a temporary sibling, then a rename; an existing
    adapter there is replaced); ``folds``: the chosen head fitted without each fold's links
    (:data:`FOLDS_FILE`)."""
    # optional: the models extra; safetensors takes ~0.3 s to import
    from safetensors.numpy import save_file

    path = Path(path)
    meta = {**meta, "head": {**meta.get("head", {}), "kind": head.kind}}
    with building_dir(path) as temp:
        if head.kind != "identity":
            save_file({k: np.ascontiguousarray(v, np.float32) for k, v in head.tensors.items()},
                      str(temp / HEAD_FILE))
        if folds and head.kind != "identity":
            save_file({f"{fold}.{k}": np.ascontiguousarray(v, np.float32)
                       for fold, fitted in folds.items() for k, v in fitted.tensors.items()},
                      str(temp / FOLDS_FILE))
        (temp / ADAPTER_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n",
                                         encoding="utf-8")
        _check_meta(temp, meta)
    return path


def read_fold_heads(adapter: Adapter) -> dict[int, Head]:
    """The adapter's head fitted without each fold's links, by fold (:data:`FOLDS_FILE`);
    empty when it has none (an identity, or an adapter written without them) or when the file
    cannot be read (the caller then fits them again)."""
    where = adapter.path / FOLDS_FILE
    if adapter.head.kind == "identity" or not where.is_file():
        return {}
    # optional: the models extra; safetensors takes ~0.3 s to import
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    try:
        tensors = load_file(str(where))
    except (SafetensorError, OSError, ValueError):
        return {}
    out: dict[int, Head] = {}
    for key, value in tensors.items():
        fold, _, name = key.partition(".")
        if not fold.isdigit():
            return {}
        out.setdefault(int(fold), Head(adapter.head.kind)).tensors[name] = np.asarray(
            value, np.float32)
    if any(set(h.tensors) != set(adapter.head.tensors) or h.shape() != adapter.head.shape()
           for h in out.values()):
        return {}
    return out


def corpus_adapters(corpus: Corpus) -> Path:
    """Where a corpus keeps its adapters (``CORPUS/adapters``)."""
    return corpus.layout.adapters


def find_adapter(name: str, corpus: Corpus | None = None) -> Path | None:
    """The adapter directory ``name`` stands for: a directory holding ``adapter.json``, or
    ``CORPUS/adapters/NAME``; None when it names no adapter."""
    if not name or "+" in name:
        return None
    candidate = Path(name)
    if (candidate / ADAPTER_FILE).is_file():
        return candidate
    if corpus is not None and "/" not in name and "\\" not in name:
        inside = corpus_adapters(corpus) / name
        if (inside / ADAPTER_FILE).is_file():
            return inside
    return None


@dataclass
class BaseVectors:
    """The stored vectors of an adapter's bases, concatenated: ids (sorted), the text hash of
    each paper (of the first base) and a float32 matrix of unit rows."""

    ids: list[str]
    hashes: list[str]
    matrix: np.ndarray
    dims: list[int]

    def fingerprint(self) -> str:
        """A short digest of the ids, hashes and vector bytes."""
        digest = hashlib.sha256()
        for paper, text in zip(self.ids, self.hashes, strict=True):
            digest.update(f"{paper}\t{text}\n".encode())
        digest.update(np.ascontiguousarray(self.matrix).tobytes())
        return digest.hexdigest()[:16]


def concatenate(parts: Sequence[np.ndarray]) -> np.ndarray:
    """Unit rows of each part side by side, the whole scaled to unit rows."""
    return normalise(np.hstack([normalise(p) for p in parts]))


def base_vectors(corpus: Corpus, keys: Sequence[str],
                 load: Callable[[Corpus, str], tuple[list[str], list[str], np.ndarray]],
                 dims: Sequence[int] | None = None) -> BaseVectors:
    """The stored vectors of each vector key of ``keys`` (``load``: the vector table reader,
    :func:`openmsd.models.load_vector_table`), concatenated in that order; :class:`AdapterError`
    naming the command to run when a base has none, when the bases cover different papers, or
    when a base's dimension is not the ``dims`` the adapter was trained on."""

    tables = []
    for i, key in enumerate(keys):
        try:
            ids, hashes, matrix = load(corpus, key)
        except FileNotFoundError:
            model, backend = split_vector_key(key)
            other = [b for b in stored_backends(corpus, model_name(key))
                     if b != (backend or "torch")]
            also = (f" (it has {model}'s vectors of the {', '.join(other)} backend only; the "
                    "adapter needs the same backend)" if other else "")
            raise AdapterError(f"{corpus.root}: no vectors of {key!r}{also}; run 'openmsd embed "
                               f"{corpus.root} --model {model} --backend {backend or 'torch'}' "
                               "first") from None
        if not ids:
            raise AdapterError(f"{corpus.root}: the vectors of {key!r} hold no current paper; "
                               f"run 'openmsd embed {corpus.root} --model {model_name(key)}'")
        if dims is not None and matrix.shape[1] != dims[i]:
            raise AdapterError(f"{corpus.root}: the vectors of {key!r} have {matrix.shape[1]} "
                               f"dimensions, the adapter was trained on {dims[i]}")
        tables.append((key, ids, hashes, matrix))
    first_key, first_ids, first_hashes, _ = tables[0]
    for key, ids, _, _ in tables[1:]:
        if ids != first_ids:
            missing = len(set(first_ids) - set(ids))
            extra = len(set(ids) - set(first_ids))
            raise AdapterError(
                f"{corpus.root}: the bases hold vectors of different papers: {key!r} lacks "
                f"{missing:,} of {first_key!r}'s {len(first_ids):,} and has {extra:,} it lacks; "
                f"embed the missing ones ('openmsd embed {corpus.root} --model MODEL')")
    return BaseVectors(first_ids, first_hashes,
                       concatenate([t[3] for t in tables]) if len(tables) > 1
                       else normalise(tables[0][3]), [t[3].shape[1] for t in tables])


class AdapterEncoder:
    """A free text encoded by the adapter's base(s) (each with its stored backend), the
    vectors concatenated and mapped by the head: the adapter as a :class:`DenseEncoder`."""

    def __init__(self, adapter: Adapter,
                 load: Callable[[str, str], Any]):
        self.adapter = adapter
        self.name = adapter.name
        self.dim = adapter.dim
        self.bases = [load(b["model"], b["backend"]) for b in adapter.bases]
        for base, entry in zip(self.bases, adapter.bases, strict=True):
            if int(getattr(base, "dim", entry["dim"])) != int(entry["dim"]):
                raise AdapterError(f"{adapter.path}: base {entry['model']!r} gives "
                                   f"{base.dim} dimensions, the adapter was trained on "
                                   f"{entry['dim']}")

    def encode(self, texts: Sequence[str], kind: Kind = "passage",
               batch_size: int = 32) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        parts = [base.encode(texts, kind, batch_size) for base in self.bases]
        return self.adapter.apply(concatenate(parts) if len(parts) > 1 else parts[0])


def map_corpus(corpus: Corpus, adapter: Adapter,
               load: Callable[[Corpus, str], tuple[list[str], list[str], np.ndarray]],
               chunk: int = 65_536) -> tuple[int, Path]:
    """Store the adapted vector of every paper the bases have a current vector of, under the
    adapter's name (its vector key): the base vectors through the head, no text encoded. The
    whole directory is replaced at once (a new head changes every vector). Returns the count
    and the directory. Holds the corpus's writer lock."""
    with corpus_lock(corpus.root, create=False):
        return _map_corpus(corpus, adapter, load, chunk)


def _map_corpus(corpus: Corpus, adapter: Adapter,
                load: Callable[[Corpus, str], tuple[list[str], list[str], np.ndarray]],
                chunk: int) -> tuple[int, Path]:

    vectors = base_vectors(corpus, [b["key"] for b in adapter.bases], load,
                           [int(b["dim"]) for b in adapter.bases])
    target = vectors_dir(corpus, adapter.name)
    with building_dir(target) as temp:
        for part, start in enumerate(range(0, len(vectors.ids), chunk)):
            stop = start + chunk
            write_part(temp / f"part-{part:05d}.parquet", vectors.ids[start:stop],
                       vectors.hashes[start:stop], adapter.apply(vectors.matrix[start:stop]))
        (temp / MAPPED_BY).write_text(head_digest(adapter) + "\n", encoding="utf-8")
    return len(vectors.ids), target
