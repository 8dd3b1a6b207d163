"""``openmsd train adapter CORPUS --base MODEL [--base MODEL2 ...]``: one run, start to end.

1. the stored vectors of the base(s) (``openmsd embed``), concatenated; nothing is encoded;
2. the train split's pairs of the positive set (and the extra triples asked for);
3. :func:`~openmsd.train.adapter.selection.cross_validate` chooses the head, its pull and its
   epochs, or the identity;
4. the chosen head is fitted on every train row and written with its provenance
   (:func:`openmsd.models.write_adapter`), and the corpus's adapted vectors are stored under
   the adapter's name (:func:`openmsd.models.map_corpus`), ready for ``related``, ``search``
   and the untuned ``hybrid``; the chosen head's cross-validation fits, each without one
   fold's links, are kept beside it (``folds.safetensors``): ``openmsd train ranker`` learns
   the adapter from them.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from openmsd.corpus import Corpus, corpus_lock
from openmsd.crashpoint import crash_point
from openmsd.models import (
    DEFAULT_MODEL,
    Head,
    base_vectors,
    choose_backend,
    corpus_adapters,
    load_vector_table,
    map_corpus,
    read_adapter,
    write_adapter,
)
from openmsd.relations import RelationsError, parse, read_manifest
from openmsd.train.adapter.examples import (
    EXTRAS,
    AdapterDataError,
    judgements,
    positive_rows,
    split_ids,
    triple_rows,
)
from openmsd.train.adapter.fit import FitSettings, fit
from openmsd.train.adapter.head import HEADS
from openmsd.train.adapter.selection import Candidate, Evaluator, Judged, cross_validate
from openmsd.vectors import model_slug, split_vector_key, stored_backends, vector_key

__all__ = ["AdapterConfig", "adapter_name", "train_adapter"]

#: Fewer train pairs than this and an adapter has nothing to learn from.
MIN_PAIRS = 20
WIDEST = "dc-or-cc-or-bc"
"""The largest positive set: every pair of the three relations."""

Progress = Callable[[str, int | None], Callable[[int], None]]


@dataclass
class AdapterConfig:
    """The settings of one adapter run (defaults: what the figures in docs/guides/adapters.md
    were chosen with)."""

    corpus: str
    bases: list[str] = field(default_factory=lambda: [DEFAULT_MODEL])
    out: str | None = None
    positives: str = WIDEST
    balanced: bool = False
    heads: list[str] = field(default_factory=lambda: ["linear"])
    pulls: list[float] = field(default_factory=lambda: [0.03, 0.1, 0.3])
    extras: list[str] = field(default_factory=list)
    epochs: int = 10
    folds: int = 5
    batch_size: int = 64
    temperature: float = 0.05
    learning_rate: float = 1e-3
    rank: int = 32
    seed: int = 0
    min_dev_queries: int = 100
    cv_rows: int = 100_000
    """Above this many training rows the corpus is large: one fold of the ``folds`` is judged,
    each fit on a sample of this many rows, and the final head takes as many steps as the
    chosen fit did."""
    cv_queries: int = 2_000
    patience: int = 2
    """On a large corpus, a candidate's fits stop after this many epochs without a better
    out-of-fold figure (a small corpus's candidates run every epoch)."""
    threads: int = field(default_factory=lambda: _threads())

    def check(self) -> None:
        """ValueError naming the first bad setting."""
        parse(self.positives)
        for head in self.heads:
            if head not in HEADS:
                raise AdapterDataError(f"--head {head!r}: expected one of {', '.join(HEADS)}")
        for extra in self.extras:
            if extra not in EXTRAS:
                raise AdapterDataError(f"--extra {extra!r}: expected one of {', '.join(EXTRAS)}")
        if not self.bases:
            raise AdapterDataError("no --base model given")
        if any(p < 0 for p in self.pulls) or not self.pulls:
            raise AdapterDataError("--pull: expected one or more values ≥ 0")
        for name, value, low in (("--epochs", self.epochs, 1), ("--folds", self.folds, 2),
                                 ("--batch-size", self.batch_size, 2), ("--rank", self.rank, 1),
                                 ("patience", self.patience, 1)):
            if value < low:
                raise AdapterDataError(f"{name} {value}: expected at least {low}")


def _threads() -> int:
    """``$OPENMSD_THREADS``, else 1: a head's products are small, and on a busy machine two
    threads synchronising each tiny step are a hundred times slower than one."""
    wanted = os.environ.get("OPENMSD_THREADS", "")
    return int(wanted) if wanted.isdigit() and int(wanted) > 0 else 1


def adapter_name(bases: Sequence[str]) -> str:
    """The default name of an adapter over ``bases`` (its directory and vector key).

    >>> adapter_name(["e5-small-multilingual@onnx", "minilm-en"])
    'adapter-e5-small-multilingual.minilm-en'
    """
    return "adapter-" + ".".join(model_slug(split_vector_key(b)[0]) for b in bases)


def base_keys(corpus: Corpus, bases: Sequence[str]) -> list[dict[str, Any]]:
    """Each base as ``{model, backend, key}``: the backend named (``MODEL:onnx``, formerly
    ``MODEL@onnx``), else the one
    the corpus has vectors of (the newest); AdapterDataError naming the command that makes
    them when it has none."""
    out = []
    for base in bases:
        model, backend = split_vector_key(base)
        stored = stored_backends(corpus, model)
        if not backend and not stored:
            raise AdapterDataError(f"{corpus.root}: no vectors of {model!r}; run 'openmsd embed "
                                   f"{corpus.root} --model {model}' first")
        backend = backend or choose_backend(corpus, model)
        out.append({"model": model, "backend": backend, "key": vector_key(model, backend)})
    if len({b["key"] for b in out}) < len(out):
        raise AdapterDataError(f"a base is named twice: {', '.join(bases)}")
    return out


def train_adapter(config: AdapterConfig, evaluator: Evaluator,
                  progress: Progress | None = None) -> dict[str, Any]:
    """Train, choose, write and apply an adapter (see the module's docstring); returns its
    ``adapter.json`` (with ``path`` and the count of papers mapped). Nothing is written when
    the data is not fit to learn from."""
    threads = torch.get_num_threads()
    torch.set_num_threads(config.threads)
    try:
        return _train(config, evaluator, progress)
    finally:
        torch.set_num_threads(threads)


def _with_vectors(pairs: pa.Table, known: pa.Array) -> pa.Table:
    """The relevant ``pairs`` whose query and doc are both ``known`` (have vectors)."""
    return pairs.filter(pc.and_(pc.is_in(pairs["query"], value_set=known),
                                pc.is_in(pairs["doc"], value_set=known)))


def _some_queries(pairs: pa.Table, limit: int, seed: int) -> pa.Table:
    """The relevant ``pairs`` of at most ``limit`` of their queries (a seeded sample)."""
    queries = pc.unique(pairs["query"])
    if len(queries) <= limit:
        return pairs
    chosen = np.sort(np.random.default_rng(seed).choice(len(queries), limit, replace=False))
    return pairs.filter(pc.is_in(pairs["query"], value_set=queries.take(pa.array(chosen))))


def _too_few_hint(config: AdapterConfig, no_vector: int, counts: dict[str, int]) -> str:
    """What to do about too few train pairs: a larger positive set, the missing vectors, or,
    where neither would help, the papers the corpus's references point to (``counts``: the
    whole graph's pairs per relation)."""
    hints = []
    if config.positives != WIDEST:
        hints.append(f"choose a larger positive set (--positives {WIDEST})")
    if no_vector:
        hints.append(f"embed the missing papers ('openmsd embed {config.corpus}')")
    if hints:
        return " or ".join(hints)
    return (f"the whole graph holds DC {counts.get('dc', 0):,}, CC {counts.get('cc', 0):,} "
            f"and BC {counts.get('bc', 0):,} pairs of corpus papers: ingest the papers its "
            "references point to, so that its citations link papers of the corpus")


def _train(config: AdapterConfig, evaluator: Evaluator, progress: Progress | None
           ) -> dict[str, Any]:
    started = time.perf_counter()
    config.check()
    corpus = Corpus(config.corpus)
    manifest = corpus.check()
    try:
        relations = read_manifest(corpus)  # relations of this build of the corpus
    except RelationsError as error:
        raise AdapterDataError(str(error)) from None
    bases = base_keys(corpus, config.bases)
    reading = progress("reading the vectors, train rows and judgements", 3) if progress \
        else (lambda _n: None)
    vectors = base_vectors(corpus, [b["key"] for b in bases], load_vector_table)
    reading(1)
    for base, dim in zip(bases, vectors.dims, strict=True):
        base["dim"] = dim
    where = {paper: i for i, paper in enumerate(vectors.ids)}
    train = np.array([where[p] for p in split_ids(corpus, "train") if p in where], np.int64)
    found = positive_rows(corpus, config.positives, where, config.balanced, config.seed)
    if len(found.rows) < MIN_PAIRS:
        raise AdapterDataError(
            f"{corpus.root}: {len(found.rows)} train pairs of {config.positives!r} with vectors "
            f"({found.no_vector} more without): an adapter needs at least {MIN_PAIRS}; "
            + _too_few_hint(config, found.no_vector, relations.get("counts", {})))
    reading(1)
    rows = {"positives": found.rows}
    left_out = {"positives": found.no_vector}
    for extra in sorted({e for e in config.extras}):
        triples = triple_rows(corpus, extra, where)
        rows[extra], left_out[extra] = triples.rows, triples.no_vector
    name = Path(config.out).name if config.out else adapter_name([b["key"] for b in bases])
    if not re.fullmatch(r"[A-Za-z0-9._-]+", name) or name.startswith("."):
        raise AdapterDataError(f"--out {config.out}: an adapter's directory name is its model "
                               "name: expected letters, digits, '.', '_' or '-'")
    out = Path(config.out) if config.out else corpus_adapters(corpus) / name
    candidates = [Candidate(h, p, tuple(sorted(config.extras)))
                  for h in config.heads for p in config.pulls]
    settings = FitSettings(config.heads[0], config.pulls[0], config.epochs, config.batch_size,
                           config.temperature, config.learning_rate, config.rank, config.seed)
    known = pa.array(vectors.ids, pa.string())
    dev_known = _with_vectors(judgements(corpus, "dev"), known)
    dev_pool = np.array([where[p] for p in split_ids(corpus, "dev") if p in where], np.int64)
    train_pairs = _with_vectors(judgements(corpus, "train"), known)
    reading(1)
    large = sum(len(v) for v in rows.values()) > config.cv_rows
    if large:  # at most cv_queries dev queries judged, as a fold's
        dev_known = _some_queries(dev_known, config.cv_queries, config.seed)
    judged_folds = 1 if large else config.folds
    fits = len(candidates) * config.epochs * judged_folds
    step = progress("cross-validating the adapter (fitted epochs)", fits) if progress else None
    selection = cross_validate(vectors.ids, vectors.matrix, train, rows, train_pairs,
                               Judged(dev_pool, dev_known), candidates, settings, config.folds,
                               evaluator, config.min_dev_queries, step, judged_folds,
                               config.cv_rows if large else None,
                               config.cv_queries if large else None,
                               config.patience if large else None)
    head = Head("identity")
    chosen = selection.candidate
    final_steps = None
    if chosen is not None:
        every = np.vstack([rows["positives"], *(rows[e] for e in chosen.extras)])
        epochs = selection.epochs
        if large:  # as many steps as the chosen fit on its sample took
            final_steps = selection.epochs * -(-config.cv_rows // config.batch_size)
            epochs = -(-final_steps * config.batch_size // len(every))
        final = FitSettings(chosen.head, chosen.pull, epochs, config.batch_size,
                            config.temperature, config.learning_rate, config.rank,
                            config.seed)
        step = progress("fitting the chosen head (epochs)", epochs) if progress else None
        head = fit(torch.as_tensor(vectors.matrix), every, final,
                   (lambda _e, _h: step(1)) if step else None, final_steps).export()
    seconds = time.perf_counter() - started
    meta = {
        "name": name,
        "bases": bases,
        "head": {"kind": head.kind, "rank": config.rank if head.kind == "low-rank" else None},
        "training": {
            "positives": config.positives, "balanced": config.balanced,
            "extras": list(chosen.extras) if chosen else [],
            "rows": {k: len(v) for k, v in rows.items()},
            "rows_without_vectors": left_out,
            "settings": {**asdict(config), "out": str(out)},
            "chosen": {"candidate": chosen.label() if chosen else "identity",
                       "head": chosen.head if chosen else "identity",
                       "pull": chosen.pull if chosen else None, "epochs": selection.epochs},
            "seconds": round(seconds, 2),
            "held_out": {"folds": config.folds, "seed": config.seed,
                         "fitted": sorted(selection.fold_heads),
                         "rows": config.cv_rows if large else None},
        },
        "selection": {
            "method": (f"{config.folds}-fold cross-validation over the train split's papers "
                       "(held-out links)" if not large else
                       f"one of {config.folds} folds of the train split's papers held out "
                       f"(held-out links; fits on {config.cv_rows:,} sampled rows, at most "
                       f"{config.cv_queries:,} queries judged in the fold and in dev; a "
                       f"candidate stops after {config.patience} epochs without a better "
                       "figure)")
                      + ((" and the dev split" + (" (with that fold's fits)" if large else ""))
                         if selection.dev_used else ""),
            "final_steps": final_steps,
            "objective": "SDSM average MAP (%) of the held-out queries",
            "queries": selection.queries,
            "dev_used": selection.dev_used,
            "min_dev_queries": config.min_dev_queries,
            "identity_map": selection.identity,
            "chosen_map": selection.best,
            "figures": selection.figures,
        },
        "corpus": {"root": str(corpus.root), "build": manifest.get("build", {}).get("id"),
                   "papers_with_vectors": len(vectors.ids), "train_papers": len(train),
                   "data_fingerprint": vectors.fingerprint()},
    }
    writing = progress("writing the adapter and the corpus's adapted vectors", 2) \
        if progress else (lambda _n: None)
    with corpus_lock(corpus.root, create=False):  # the adapter, then vectors of its head
        path = write_adapter(out, meta, head, selection.fold_heads)
        writing(1)
        crash_point("adapter.written")  # killed here: its old vectors are refused, named
        mapped, directory = map_corpus(corpus, read_adapter(path), load_vector_table)
        writing(1)
    return {**meta, "path": str(path), "mapped": mapped, "vectors": str(directory)}
