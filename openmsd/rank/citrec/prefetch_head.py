"""The learned first stage of citation recommendation: a linear head over a dense model's query
vectors, learned from a corpus's citation contexts (``openmsd train citrec-prefetch``, a step of
``openmsd train ranker``).

A context's query vector ``q`` becomes ``W q / ‖W q‖`` (``W``: ``dim × dim``, started at the
identity); the papers' vectors stay as the index holds them. ``train citrec-prefetch`` keeps a
head only where it ranked the cited papers of held-out citing papers better than the untrained
model out of fold; ``recommend`` uses it wherever its first stage encodes a location with that
model (the fused ranker's dense member, the prefetch of the two stages, the dense index).

The head is one file, ``CORPUS/index/citrec_prefetch.npz``: its matrix ``weight`` and a JSON
``meta`` (the model's vector key, what was measured); a damaged one is refused in one line
(:class:`~openmsd.artifact.ArtifactError`).

>>> head = PrefetchHead("m", np.eye(2, dtype=np.float32), {})
>>> head.apply(np.array([[3.0, 4.0]], np.float32)).tolist()
[[0.6000000238418579, 0.800000011920929]]
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from openmsd.artifact import ArtifactError
from openmsd.corpus import Corpus
from openmsd.io import atomic_path
from openmsd.models import normalise
from openmsd.rank.explain import dense_members
from openmsd.rank.scorer import Queries, Scorer
from openmsd.rank.spec import RankerSpec

__all__ = ["PREFETCH_HEAD_FILE", "PrefetchHead", "adapt_queries", "prefetch_head_path",
           "read_prefetch_head", "remove_prefetch_head", "write_prefetch_head"]

PREFETCH_HEAD_FILE = "citrec_prefetch.npz"
"""The head's file in a corpus's ``index`` folder."""
REBUILD = "openmsd train citrec-prefetch {root}"


@dataclass(frozen=True)
class PrefetchHead:
    """A learned query head: the dense model's vector key it maps (``model``), its matrix
    (``weight``, dim × dim) and what training measured (``meta``)."""

    model: str
    weight: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)

    def apply(self, vectors: np.ndarray) -> np.ndarray:
        """Unit rows ``W q / ‖W q‖`` of query ``vectors`` (n × dim)."""
        return normalise(np.asarray(vectors, np.float32) @ self.weight.T)

    def maps(self, model: str) -> bool:
        """Whether this head is for the vectors of ``model`` (a vector key, a ranker name or a
        model directory), whichever backend embedded them."""
        return model == self.model or _stored(model) == _stored(self.model)


def _stored(model: str) -> str:
    """The model whose vectors ``model`` names (a name that is no ranker: itself)."""
    try:
        return RankerSpec.parse(model).stored_model
    except ValueError:
        return model


def prefetch_head_path(corpus: Corpus) -> Path:
    """Where ``corpus``'s head is (or would be) stored."""
    return Path(corpus.root) / "index" / PREFETCH_HEAD_FILE


def write_prefetch_head(corpus: Corpus, head: PrefetchHead) -> Path:
    """Store ``head`` for ``corpus`` (atomically); the path."""
    path = prefetch_head_path(corpus)
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        np.savez(handle, weight=np.asarray(head.weight, np.float32),
                 meta=np.array(json.dumps({**head.meta, "model": head.model}, sort_keys=True)))
    return path


def remove_prefetch_head(corpus: Corpus) -> bool:
    """Remove ``corpus``'s head, if it has one; whether it had."""
    path = prefetch_head_path(corpus)
    if path.is_file():
        path.unlink()
        return True
    return False


def read_prefetch_head(corpus: Corpus) -> PrefetchHead | None:
    """``corpus``'s head, or None where it has none; :class:`ArtifactError` (one line naming
    the file and the command that rebuilds it) where the file is damaged."""
    path = prefetch_head_path(corpus)
    if not path.is_file():
        return None
    rebuild = REBUILD.format(root=corpus.root)
    try:
        with np.load(path, allow_pickle=False) as stored:
            weight = np.asarray(stored["weight"], np.float32)
            meta = json.loads(str(stored["meta"]))
    except (OSError, ValueError, KeyError, EOFError) as error:  # not an npz, or a field lost
        raise ArtifactError.damaged(path, f"not a prefetch head ({type(error).__name__}: "
                                    f"{str(error).splitlines()[0] if str(error) else ''})",
                                    rebuild) from None
    if (weight.ndim != 2 or weight.shape[0] != weight.shape[1] or not weight.size
            or not np.isfinite(weight).all()):
        raise ArtifactError.damaged(path, f"field 'weight': expected a finite square matrix, "
                                    f"got shape {weight.shape}", rebuild)
    if not isinstance(meta, dict) or not isinstance(meta.get("model"), str):
        raise ArtifactError.damaged(path, "field 'meta': expected a JSON object naming the "
                                    "model", rebuild)
    return PrefetchHead(meta["model"], weight, meta)


def adapt_queries(scorer: Scorer, queries: Queries, head: PrefetchHead | None) -> Queries:
    """``queries`` with the query vectors of ``scorer``'s dense members of ``head``'s model put
    through the head (kept in ``queries.vectors``, where those members read them); unchanged
    without a head or such a member."""
    if head is None:
        return queries
    for dense in dense_members(scorer):
        if head.maps(dense.name) and dense.name not in queries.vectors and len(queries):
            vectors = dense.query_vectors(queries)
            if vectors.shape[1] == head.weight.shape[0]:
                queries.vectors[dense.name] = head.apply(vectors)
    return queries
