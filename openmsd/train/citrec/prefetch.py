"""``openmsd train citrec-prefetch CORPUS``: learn ``recommend``'s first stage from the corpus's
citation contexts.

The queries are the fundamental contexts of the corpus's citation locations (the sentence that
cites, the one before and the one after, :func:`openmsd.rank.load_citrec`; references outside
the corpus are candidates too, so a corpus whose references lie outside it still teaches), the
positives the papers each one cites. A linear head over the dense model's query vectors
(:class:`openmsd.train.adapter.head.LinearHead`, started at the identity, pulled toward it by
``pull`` × ‖W − I‖²) is fitted by the cross-entropy of each context picking its cited paper
among every candidate (cosine / ``temperature``; the location's other cited papers and its own
paper left out); the candidates' vectors stay as the model gives them, as the index holds them.

Selection is out of fold, the folds grouped by citing paper (a paper's contexts are all in one
fold, as a new manuscript's would be): for each ``pull`` the heads fitted without a fold rank
that fold's contexts, and the pooled Recall@10 is compared with the untrained model's on the
same contexts. The best pull's head, refitted on every context, is kept
(:func:`openmsd.rank.write_prefetch_head`) only where it beats the untrained model out of fold;
otherwise the corpus keeps (or goes back to) the untrained first stage.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from openmsd.corpus import Corpus
from openmsd.models import (
    DEFAULT_MODEL,
    choose_backend,
    fundamental,
    load_model,
    normalise,
)
from openmsd.rank import (
    CitrecData,
    CitrecDataError,
    PrefetchHead,
    RankerSpec,
    candidate_mask,
    default_dense,
    is_dense,
    prefetch_head_path,
    recall_at,
    remove_prefetch_head,
    write_prefetch_head,
)
from openmsd.rank import load_citrec as load
from openmsd.train.adapter.folds import fold_of
from openmsd.train.adapter.head import LinearHead
from openmsd.vectors import read_current, text_hash, vector_key, vectors_dir

__all__ = ["PrefetchConfig", "PrefetchTask", "fit_head", "out_of_fold", "prefetch_task",
           "select_head", "train_prefetch_head"]

Progress = Callable[[str, int], Callable[[int], None]]


@dataclass(frozen=True)
class PrefetchConfig:
    """How the head is learned: the dense ``model`` (default: the corpus's), the ``folds``
    (grouped by citing paper) and ``seed``, the ``pulls`` tried, and the fit's ``epochs``,
    ``batch_size``, ``temperature``, ``learning_rate`` and ``threads``; ``ks``: the recalls
    reported."""

    model: str | None = None
    folds: int = 5
    seed: int = 0
    pulls: tuple[float, ...] = (0.01, 0.1, 1.0)
    epochs: int = 20
    batch_size: int = 128
    temperature: float = 0.05
    learning_rate: float = 1e-3
    ks: tuple[int, ...] = (10, 50)
    negatives: int = 2048
    """Candidates a step's softmax reads at most: every candidate when the corpus has no
    more, else the batch's cited papers and a fresh random draw of the others (a sampled
    softmax: a step costs the same at 5,000 candidates as at 5 million)."""
    threads: int = 1
    """Torch threads while a head is fitted (its steps are small)."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class PrefetchTask:
    """A corpus's contexts and candidates as vectors: ``queries`` (locations × dim, unit),
    ``candidates`` (candidates × dim, unit), the locations (``data.locations``), candidate
    ids, ``mask`` (False: a location's own paper), each location's citing paper and how many
    candidates' vectors were the corpus's stored ones."""

    model: str
    data: CitrecData
    ids: list[str]
    queries: np.ndarray
    candidates: np.ndarray
    mask: np.ndarray
    citing: list[str] = field(default_factory=list)
    stored: int = 0
    """Candidates whose vectors were read from the corpus's stored ones (not encoded)."""

    def scores(self, rows: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray:
        """(len(rows) × candidates) cosines of the locations at ``rows`` (through the head
        ``weight`` when given); masked pairs −inf."""
        q = self.queries[rows]
        if weight is not None:
            q = PrefetchHead(self.model, weight).apply(q)
        return np.where(self.mask[rows], q @ self.candidates.T, -np.inf)

    def recalls(self, rows: np.ndarray, weight: np.ndarray | None, ks: Sequence[int]
                ) -> dict[str, float]:
        """Recall@k of the locations at ``rows`` for each of ``ks``."""
        scores = self.scores(rows, weight)
        locations = [self.data.locations[i] for i in rows]
        return {f"Recall@{k}": round(recall_at(scores, locations, self.ids, k), 4) for k in ks}


def _encode(encoder: Any, texts: list[str], kind: str, label: str,
            progress: Progress | None, batch: int = 256) -> np.ndarray:
    """Unit vectors of ``texts`` (``kind``: query or passage), in their order; encoded
    ``batch`` at a time in order of length (a batch is padded to its longest text: short
    references' titles beside long abstracts would cost several times over)."""
    advance = progress(label, len(texts)) if progress else None
    order = np.argsort([len(text) for text in texts], kind="stable")
    parts = []
    for start in range(0, len(texts), batch):
        rows = order[start:start + batch]
        parts.append(np.asarray(encoder.encode([texts[i] for i in rows], kind), np.float32))
        if advance:
            advance(len(rows))
    if not parts:
        return np.zeros((0, 0), np.float32)
    out = np.empty((len(texts), parts[0].shape[1]), np.float32)
    out[order] = np.vstack(parts)
    return normalise(out)


def _stored(corpus: Corpus, key: str, ids: list[str], texts: list[str]
            ) -> tuple[np.ndarray, np.ndarray]:
    """The vectors ``corpus`` stores under ``key`` of the papers ``ids`` whose stored text
    hash is that of their text in ``texts`` (the text they would be encoded from): their
    positions in ``ids`` and the matrix (unit rows); none where it stores no such vector."""
    position = {p: i for i, p in enumerate(ids)}
    found, _, matrix = read_current(vectors_dir(corpus, key),
                                    {p: text_hash(t) for p, t in zip(ids, texts, strict=True)})
    if not found:
        return np.zeros(0, np.int64), np.zeros((0, 0), np.float32)
    return np.array([position[p] for p in found], np.int64), normalise(matrix)


def _candidates(corpus: Corpus, encoder: Any, key: str, ids: list[str], texts: list[str],
                progress: Progress | None) -> tuple[np.ndarray, int]:
    """Unit vectors of the candidates ``ids`` (their ``texts``): the corpus's stored vectors
    of ``key`` where they are current, the others encoded; and how many were stored."""
    rows, stored = _stored(corpus, key, ids, texts)
    missing = np.setdiff1d(np.arange(len(ids)), rows)
    encoded = _encode(encoder, [texts[i] for i in missing], "passage",
                      "encoding candidate papers", progress)
    dim = stored.shape[1] if len(rows) else encoded.shape[1] if len(missing) else 0
    out = np.zeros((len(ids), dim), np.float32)
    if len(rows):
        out[rows] = stored
    if len(missing):
        out[missing] = encoded
    return out, len(rows)


def prefetch_task(corpus: Corpus, model: str | None = None, progress: Progress | None = None,
                  data: CitrecData | None = None) -> PrefetchTask:
    """The corpus's contexts encoded by ``model`` (default: the corpus's dense model, with the
    backend of its stored vectors) and its candidates' vectors: those the corpus stores for
    that model and backend where current (their text's hash), the others encoded;
    :class:`CitrecDataError` where the corpus has no context citing a candidate."""
    data = data or load(corpus, outside=True)
    if model and Path(model).is_dir():  # a model directory: as it is
        name, backend = model, "torch"
    else:
        spec = RankerSpec.parse(model or default_dense(corpus))
        name = spec.stored_model if is_dense(str(spec)) else DEFAULT_MODEL
        backend = choose_backend(corpus, name, spec.backend or None)
    encoder = load_model(name, backend)
    key = vector_key(name, backend)
    ids = sorted(data.papers)
    texts = [" ".join(fundamental(loc.sentences, loc.at)) for loc in data.locations]
    queries = _encode(encoder, texts, "query", "encoding citation contexts", progress)
    candidates, stored = _candidates(corpus, encoder, key, ids, [data.papers[p][0] for p in ids],
                                     progress)
    return PrefetchTask(key, data, ids, queries, candidates,
                        candidate_mask(data, data.locations, ids, "random"),
                        [loc.citing_id for loc in data.locations], stored)


def fit_head(task: PrefetchTask, rows: np.ndarray, pull: float, config: PrefetchConfig
             ) -> np.ndarray:
    """The head's matrix fitted on the locations at ``rows``: each (location, cited paper)
    an example, the cross-entropy of its cosine / temperature among the candidates (every
    one, or at most ``config.negatives`` drawn a step; its own paper and its other cited
    papers left out), plus ``pull`` × ‖W − I‖²; Adam."""
    import torch  # optional: the models extra; torch ~2.8 s

    threads = torch.get_num_threads()
    torch.set_num_threads(config.threads)  # many tiny steps: one thread, not a hundred waits
    try:
        return _fit(task, rows, pull, config)
    finally:
        torch.set_num_threads(threads)


def _fit(task: PrefetchTask, rows: np.ndarray, pull: float, config: PrefetchConfig
         ) -> np.ndarray:
    """:func:`fit_head`'s fit, on the threads it set."""
    import torch  # optional: the models extra; torch ~2.8 s

    column = {p: j for j, p in enumerate(task.ids)}
    cited = [[column[c] for c in location.cited] for location in task.data.locations]
    examples = np.array([(int(i), j) for i in rows for j in cited[i]],
                        np.int64).reshape(-1, 2)
    torch.manual_seed(config.seed)
    head = LinearHead(task.queries.shape[1])
    optimiser = torch.optim.Adam(head.parameters(), lr=config.learning_rate)
    queries = torch.from_numpy(task.queries)
    candidates = torch.from_numpy(task.candidates)
    order = np.random.default_rng(config.seed)
    total = len(task.ids)
    for _ in range(config.epochs):
        shuffled = examples[order.permutation(len(examples))]
        for start in range(0, len(shuffled), config.batch_size):
            chunk = shuffled[start:start + config.batch_size]
            columns = _columns(chunk, total, config.negatives, order)
            targets = np.searchsorted(columns, chunk[:, 1])
            logits = head(queries[chunk[:, 0]]) @ candidates[columns].T / config.temperature
            blocked = torch.from_numpy(_blocked(task, chunk, cited, columns))
            logits = logits.masked_fill(blocked, float("-inf"))
            loss = torch.nn.functional.cross_entropy(logits, torch.from_numpy(targets))
            if pull:
                loss = loss + pull * head.pull()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    return (np.eye(task.queries.shape[1], dtype=np.float32)
            + head.residual.detach().numpy().astype(np.float32))


def _columns(chunk: np.ndarray, total: int, negatives: int, rng: np.random.Generator
             ) -> np.ndarray:
    """The candidate columns a step's softmax reads, sorted: all ``total`` when there are
    no more than ``negatives``, else the chunk's targets and random others up to it."""
    if total <= negatives:
        return np.arange(total)
    drawn = rng.choice(total, size=negatives, replace=False)
    return np.union1d(chunk[:, 1], drawn)


def _blocked(task: PrefetchTask, chunk: np.ndarray, cited: list[list[int]],
             columns: np.ndarray) -> np.ndarray:
    """(examples × ``columns``) True where a candidate is left out of an example's softmax:
    its location's own paper and the other papers the location cites (``cited``: each
    location's cited papers as candidate columns)."""
    blocked = ~task.mask[np.ix_(chunk[:, 0], columns)]
    for r, (i, target) in enumerate(chunk):
        for j in cited[i]:
            at = np.searchsorted(columns, j)
            if j != target and at < len(columns) and columns[at] == j:
                blocked[r, at] = True
    return blocked


def out_of_fold(task: PrefetchTask, rows: np.ndarray, config: PrefetchConfig,
                progress: Progress | None = None) -> dict[str, dict[str, float]]:
    """Pooled out-of-fold recalls of the locations at ``rows``, folds grouped by citing paper:
    ``untrained`` (the model as it is) and ``pull=P`` for each pull (heads fitted on the other
    folds)."""
    folds = fold_of([task.citing[i] for i in rows], config.folds, config.seed)
    held = {"untrained": [], **{f"pull={p:g}": [] for p in config.pulls}}
    advance = progress("choosing the head out of fold",
                       config.folds * len(config.pulls)) if progress else None
    order = []
    for fold in range(config.folds):
        inside, outside = rows[folds == fold], rows[folds != fold]
        if not len(inside) or not len(outside):
            continue
        order.extend(inside.tolist())
        held["untrained"].append(task.scores(inside))
        for pull in config.pulls:
            held[f"pull={pull:g}"].append(task.scores(inside, fit_head(task, outside, pull,
                                                                       config)))
            if advance:
                advance(1)
    locations = [task.data.locations[i] for i in order]
    return {name: {f"Recall@{k}": round(recall_at(np.vstack(parts), locations, task.ids, k), 4)
                   for k in config.ks} if parts else {}
            for name, parts in held.items()}


def select_head(task: PrefetchTask, rows: np.ndarray, config: PrefetchConfig,
                progress: Progress | None = None) -> dict[str, Any]:
    """The choice on the locations at ``rows``: ``out_of_fold`` (every candidate's recalls),
    ``chosen`` (the best pull by out-of-fold Recall@10, the larger on ties) and ``kept``
    (whether it beats the untrained model there); with ``kept``, ``weight``: its head
    refitted on all of ``rows``."""
    table = out_of_fold(task, rows, config, progress)
    if not table["untrained"]:
        return {"out_of_fold": table, "chosen": None, "kept": False,
                "why": f"fewer than 2 of the {config.folds} folds hold a citing paper"}
    best = max(config.pulls, key=lambda p: (table[f"pull={p:g}"]["Recall@10"], p))
    key = f"pull={best:g}"
    kept = table[key]["Recall@10"] > table["untrained"]["Recall@10"]
    out: dict[str, Any] = {"out_of_fold": table, "chosen": key, "kept": kept}
    if kept:
        out["weight"] = fit_head(task, rows, best, config)
    else:
        out["why"] = (f"out of fold the head's Recall@10 ({table[key]['Recall@10']:.4f}) does "
                      f"not beat the untrained model's ({table['untrained']['Recall@10']:.4f})")
    return out


def train_prefetch_head(corpus: Corpus, config: PrefetchConfig | None = None,
                        progress: Progress | None = None) -> dict[str, Any]:
    """Learn ``corpus``'s first-stage head and store it where it wins out of fold (else remove
    any stored one); the report: ``model``, ``locations``, ``citing_papers``, the
    ``out_of_fold`` recalls, ``chosen``, ``kept`` (and ``why`` not), ``path``. A corpus
    without citation contexts: ``skipped`` says so, and its first stage stays untrained."""
    config = config or PrefetchConfig()
    try:
        task = prefetch_task(corpus, config.model, progress)
    except (CitrecDataError, FileNotFoundError) as error:
        removed = remove_prefetch_head(corpus)
        return {"skipped": f"{corpus.root}: no citation context to learn from ({error}); "
                           "recommend keeps the untrained first stage"
                           + (" (the stored head removed)" if removed else "")}
    rows = np.arange(len(task.data.locations))
    chosen = select_head(task, rows, config, progress)
    report = {"model": task.model, "locations": len(rows),
              "citing_papers": len(set(task.citing)), "candidates": len(task.ids),
              "candidates_stored": task.stored,
              "config": config.as_dict(),
              **{k: v for k, v in chosen.items() if k != "weight"}}
    if chosen["kept"]:
        report["path"] = str(write_prefetch_head(corpus, PrefetchHead(
            task.model, chosen["weight"], {k: v for k, v in report.items() if k != "path"})))
    else:
        report["removed"] = remove_prefetch_head(corpus)
        report["path"] = str(prefetch_head_path(corpus))
    return report
