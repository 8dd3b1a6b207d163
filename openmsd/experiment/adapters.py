"""The first step of ``openmsd train ranker``: an adapter for every dense model of the corpus.

Each dense model the corpus has vectors of, and no adapter over yet, gets one: ``openmsd train
adapter``'s run (heads fitted on the corpus's citations, kept only where they rank held-out
links better than the base out of fold, else the identity), then its index. The ranker reads
every adapter that is not the identity as a member of its own (:func:`adapted_members`), so the
ranker, not a rule, decides how much each is worth. It learns that from each adapter's scores
out of fold (:func:`held_out_members`), never from scores of links the adapter was fitted on:
its own cross-validation's fits where it kept every fold's, else one head fitted without the
links of the papers the ranker queries.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from openmsd.corpus import Corpus
from openmsd.index import build_index
from openmsd.rank import HeldOutDense, Papers, Scorer, adapters_of, dense_models

__all__ = ["adapted", "adapted_members", "held_out_members", "train_adapters"]


def adapted(corpus: Corpus) -> list[Any]:
    """The corpus's adapters that change their base (not the identity), the most recently
    trained first."""
    return [a for a in adapters_of(corpus) if a.head.kind != "identity"]


def adapted_members(corpus: Corpus) -> list[str]:
    """The names of :func:`adapted`."""
    return [a.name for a in adapted(corpus)]


def _missing(corpus: Corpus) -> list[str]:
    """The stored vector keys of dense models no single-base adapter is over yet."""
    found = adapters_of(corpus)
    names = {a.name for a in found}
    covered = {base["key"] for a in found if len(a.bases) == 1 for base in a.bases}
    return [key for key in dense_models(corpus) if key not in names | covered]


def train_adapters(corpus: Corpus, progress: Callable[[str, int], Callable[[int], None]]
                   | None = None) -> list[dict[str, Any]]:
    """Train and index an adapter for each dense model of ``corpus`` that has none; returns
    each run's ``adapter.json`` (with ``path``, and ``indexed``: the vectors indexed), or
    ``{"base", "skipped"}`` where the corpus cannot train one (too few train links with
    vectors, say): the ranker then goes on without it."""
    from openmsd.eval import sdsm_per_query  # lazy: adds ~0.9 s to this module's import

    # lazy: loads torch (~2.8 s)
    from openmsd.train import AdapterConfig, AdapterDataError, train_adapter

    runs: list[dict[str, Any]] = []
    for key in _missing(corpus):
        try:
            manifest = train_adapter(AdapterConfig(str(corpus.root), bases=[key]),
                                     sdsm_per_query, progress)
        except AdapterDataError as error:
            runs.append({"base": key, "skipped": str(error)})
            continue
        indexing = progress(f"indexing {manifest['name']}", 1) if progress else None
        built, _ = build_index(corpus, manifest["name"])
        if indexing:
            indexing(1)
        manifest["indexed"] = built.index.ntotal
        runs.append(manifest)
    return runs


def held_out_members(corpus: Corpus, folds: int, seed: int = 0,
                     progress: Callable[[str, int], Callable[[int], None]] | None = None,
                     queries: Collection[str] | None = None
                     ) -> dict[str, Callable[[Papers], Scorer]]:
    """Per adapter of :func:`adapted`, the scorer a ranker learns it from: each paper
    scored by a head that never saw its links (:func:`openmsd.train.held_out_vectors`: the
    adapter's own cross-validation fits where it kept every fold's, else one head fitted
    without the links of ``queries``, the train papers the ranker queries;
    :class:`openmsd.rank.HeldOutDense`)."""
    from openmsd.train import held_out_vectors  # lazy: loads torch (~2.8 s)

    adapters = adapted(corpus)
    step = progress("adapters fitted out of fold", len(adapters)) \
        if progress and adapters else None
    out: dict[str, Callable[[Papers], Scorer]] = {}
    for adapter in adapters:
        held = held_out_vectors(corpus, adapter, folds, seed, queries=queries)
        if step:
            step(1)
        out[adapter.name] = (lambda papers, held=held, name=adapter.name: HeldOutDense(
            papers, held.ids, held.folds, held.matrices, name))
    return out
