"""``openmsd eval citrec``: citation recommendation as MP-BERT4CR's Table 3.

Queries are the citing locations of held-out citing papers (:func:`openmsd.rank.citrec.data.
held_out`, the same draw ``train citrec`` made with the same fraction and seed; a trained
model whose held-out set differs is refused). Every candidate paper is ranked for each query,
except the citing paper itself; a location's relevant papers are all the candidates it cites.
Metrics at 10 (:mod:`openmsd.eval.metrics`) from the exact ranks (:func:`location_ranks`,
:func:`openmsd.eval.ranks.relevant_ranks`; equal scores in the relevant paper's favour):

* Recall@10 = |relevant in the top 10| / R;
* MAP@10 = Σ_{relevant i in the top 10} (i / rankᵢ) / min(R, 10), averaged over queries;
* MRR = 1 / the best rank of a relevant paper; nDCG@10 with binary gains;

for the queries with exactly one (``positive=1``), at least one (``positive>=1``) and at least
two (``positive>=2``) relevant papers. Models:

* ``bm25``: BM25 of the fundamental context against title + abstract;
* a registry or SentenceTransformer model: the untrained encoder on the fundamental context
  (query) and title + abstract (passage), the paper's SciBERT / Specter setting;
* a ``train citrec`` directory: MP-BERT4CR with its own deterministic dynamic contexts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from openmsd.corpus import Corpus
from openmsd.eval.metrics import average_precision, ndcg, rank_rows, recall, reciprocal_rank
from openmsd.eval.ranks import DenseScorer, PrecomputedRows, QueryRows, Scorer, relevant_ranks
from openmsd.eval.retrieval import text_papers
from openmsd.io import atomic_path, write_json
from openmsd.models import (
    DEFAULT_MODEL,
    RerankFusion,
    default_backend,
    fundamental,
    is_citrec_model,
    load_model,
    manuscript_context,
    read_settings,
)
from openmsd.rank import (
    CONTEXT_SIGNALS,
    ENGLISH_PAIRS,
    GRAPH_FEATURES,
    PREFETCH_DEPTH,
    SENTENCE_SIGNALS,
    TRAIN_MANIFEST,
    CitrecData,
    Location,
    PaperContexts,
    candidate_mask,
    graph_scores,
    leaves,
    load_scorer,
    profile_scores,
    rerank_rows,
    split_locations,
    two_stage,
)
from openmsd.rank import Queries as TextQueries
from openmsd.rank import load_citrec as load

GROUPS = {"positive=1": lambda r: r == 1, "positive>=1": lambda r: r >= 1,
          "positive>=2": lambda r: r >= 2}
METRICS = ("Recall@10", "MAP@10", "MRR", "nDCG@10")


class CitrecEvalError(ValueError):
    """An evaluation that cannot run: no test location, a model trained on another split."""


@dataclass
class Queries:
    """The test locations and the candidates: ids, their column in the score rows."""

    locations: list[Location]
    candidates: list[str]
    column: dict[str, int]


def query_metrics(ranks: np.ndarray, k: int = 10) -> dict[str, float]:
    """The metrics of one query from the 1-based ranks of its relevant papers.

    >>> query_metrics(np.array([2, 5, 40]))["MAP@10"]  # (1/2 + 2/5) / 3
    0.3
    """
    return {name: float(values[0]) for name, values in metric_values(ranks, k).items()}


def metric_values(ranks: np.ndarray, k: int = 10) -> dict[str, np.ndarray]:
    """:data:`METRICS` per row of a rank matrix (:mod:`openmsd.eval.metrics.rows`)."""
    return {"Recall@10": recall(ranks, k),
            "MAP@10": average_precision(ranks, k, by="cutoff"),
            "MRR": reciprocal_rank(ranks),
            "nDCG@10": ndcg(ranks, k)}


def summarise(n_relevant: np.ndarray, values: dict[str, np.ndarray]
              ) -> dict[str, dict[str, float]]:
    """Mean metrics and query counts per group; ``n_relevant``: R per query, ``values``: each
    metric per query."""
    out = {}
    for group, keep in GROUPS.items():
        rows = keep(n_relevant)
        out[group] = {"n": int(rows.sum()),
                      **{name: round(float(np.mean(values[name][rows])), 4) if rows.any()
                         else None for name in METRICS}}
    return out


def score_rows(name: str, data: CitrecData, queries: Queries, batch_size: int = 32,
               texts: list[str] | None = None) -> np.ndarray:
    """The scores (test queries × candidates) of ranker ``name``: the fundamental context
    (query) against title + abstract (passage), by the scorer
    :func:`openmsd.rank.load_scorer` makes of ``name`` (``bm25``, a registry /
    SentenceTransformer model, a fusion); a ``train citrec`` directory is MP-BERT4CR on its
    own contexts instead. Dense models run on their default backend (ONNX int8 where they have
    it); the scorers over one data set's candidates (and their encoded passages) are built
    once per process and shared, e.g. by the prefetch and its dense member's own row.
    ``texts``: other query texts than the fundamental contexts (one per location, e.g. the
    citing sentence alone)."""
    if is_citrec_model(name):
        scorer: Scorer = _citrec_scorer(name, data, queries, batch_size)
    else:
        flat = texts if texts is not None else [" ".join(fundamental(loc.sentences, loc.at))
                                                for loc in queries.locations]
        key = (id(data), tuple(queries.candidates))
        if key not in _SCORERS:
            _SCORERS.clear()  # one data set's at a time: bounded memory
            passages = [data.papers[p][0] for p in queries.candidates]
            _SCORERS[key] = (text_papers(queries.candidates, passages), {})
        papers, members = _SCORERS[key]
        onnx = {str(leaf) for leaf in leaves(name, None)} <= {DEFAULT_MODEL, "bm25", "bm25@same",
                                                              "bm25-en"}
        ranker = load_scorer(name, papers, backend=default_backend(DEFAULT_MODEL) if onnx
                             else "torch", cache=members)
        scorer = QueryRows(ranker, TextQueries.of_texts(flat))
    return scorer.rows(np.arange(len(queries.locations)))


_SCORERS: dict[tuple[int, tuple[str, ...]], tuple[Any, dict[str, Any]]] = {}


def _citrec_scorer(name: str, data: CitrecData, queries: Queries, batch_size: int) -> Scorer:
    """MP-BERT4CR with its own deterministic dynamic contexts."""
    encoder = load_model(name)
    settings = encoder.settings
    contexts = PaperContexts(data.papers)
    documents = [contexts.context(p, settings.citation_fundamental,
                                  settings.citation_supplemental) for p in queries.candidates]
    sources = [manuscript_context(loc.sentences, loc.at, settings.manuscript_supplemental)
               for loc in queries.locations]
    return DenseScorer(encoder.encode_documents(sources, "query", batch_size),
                       encoder.encode_documents(documents, "passage", batch_size))


def _profile_rows(name: str, data: CitrecData, queries: Queries) -> np.ndarray:
    """The whole-manuscript cosine of a citrec model (the rerank stage's ``manuscript``
    feature, :func:`openmsd.rank.profile_scores`)."""
    encoder = load_model(name)
    return profile_scores(encoder.model, queries.locations, queries.candidates,
                          PaperContexts(data.papers))


def _check_split(name: str, test: set[str], fraction: float, seed: int) -> None:
    """A trained citrec model must have held out exactly these citing papers."""
    manifest = Path(name) / TRAIN_MANIFEST
    if not (is_citrec_model(name) and manifest.is_file()):
        return
    trained = json.loads(manifest.read_text())
    held = set(trained["data"]["held_out_citing_papers"])
    if held != test:
        config = trained["config"]
        raise CitrecEvalError(
            f"{name}: trained with another held-out set (test_fraction "
            f"{config['test_fraction']}, seed {config['seed']}, outside_references "
            f"{config['outside_references']}); evaluate with --test-fraction {fraction} "
            f"--seed {seed} matching those, or its test contexts were seen in training")


PREFETCH = f"bm25@same+{DEFAULT_MODEL}"
"""The prefetch ranker: reciprocal-rank fusion of BM25 and the dense model (the untuned
``hybrid`` without its ``minilm-en@en`` member for English pairs; the figures of
docs/citrec.md were measured with this one)."""
ENGLISH_MODEL = ENGLISH_PAIRS
"""The English-only model on English pairs (:data:`openmsd.rank.ENGLISH_PAIRS`)."""


def rerank_fusion(model: str) -> RerankFusion | None:
    """The learned rerank fusion ``train citrec`` fitted for ``model`` (``rerank`` in its
    ``citrec.json``), or None."""
    if is_citrec_model(model):
        chosen = read_settings(Path(model)).rerank
        if chosen is not None:
            return RerankFusion.of(chosen)
    return None


def location_ranks(scores: np.ndarray, locations: list[Location], column: dict[str, int]
                   ) -> np.ndarray:
    """The rank matrix (:mod:`openmsd.eval.metrics.rows`) of the locations' cited papers in
    their score rows: 1 + the candidates scoring strictly higher."""
    pair_query = np.repeat(np.arange(len(locations)), [len(loc.cited) for loc in locations])
    pair_doc = np.array([column[c] for loc in locations for c in loc.cited], np.int64)
    ranks = relevant_ranks(PrecomputedRows(scores), np.arange(len(locations)), pair_query,
                           pair_doc, tie_order=None, exclude_self=False)
    return rank_rows(pair_query, ranks, len(locations))


def fusion_weight(model: str) -> float:
    """The weight of ``model``'s rank in its fused two-stage ranking: the one ``train
    citrec`` chose on dev (``fusion_weight`` in ``citrec.json``), else 0.5 (plain RRF)."""
    if is_citrec_model(model):
        chosen = read_settings(Path(model)).fusion_weight
        if chosen is not None:
            return chosen
    return 0.5


def stage_scores(name: str, base: Callable[[str], np.ndarray], depth: int,
                 weight: Callable[[str], float] = fusion_weight,
                 signals: Callable[[str], dict[str, np.ndarray]] | None = None) -> np.ndarray:
    """The score matrix of ``name``: a model (``base``), ``prefetch`` (the
    :data:`PREFETCH` fusion), ``two-stage:M`` (M reranks the prefetch's top ``depth``; the rest
    keep the prefetch's order below them) or ``fused:M``: those ``depth`` reranked by M's
    learned fusion (:func:`rerank_fusion`; ``signals(M)``: its features' score matrices) when
    it has one, else by the weighted RRF of M and the prefetch, ``weight(M)`` for M
    (:func:`openmsd.rank.two_stage`)."""
    if name == "prefetch":
        return base(PREFETCH)
    kind, _, model = name.partition(":")
    if kind == "fused" and model and signals is not None:
        fusion = rerank_fusion(model)
        if fusion is not None:
            return rerank_rows(base("prefetch"), signals(model), fusion, depth)
    if kind in ("two-stage", "fused") and model:
        return two_stage(base(model), base("prefetch"),
                         1.0 if kind == "two-stage" else weight(model), depth)
    return base(name)


def evaluate(corpus: Corpus, models: list[str], test_fraction: float = 0.3, seed: int = 0,
             outside: bool = False, log: Callable[[str], None] | None = None,
             split: str = "random", depth: int = PREFETCH_DEPTH,
             data: CitrecData | None = None, prefetch: np.ndarray | None = None,
             memo: dict[str, dict[str, np.ndarray]] | None = None) -> dict[str, Any]:
    """Table 3 for ``models`` on ``corpus``: ``{"corpus", "candidates", "test_locations",
    "held_out_citing_papers", "split", "prefetch_recall", "models": {name: {group: {"n",
    metric: value}}}}``. ``split="time"``: the newest citing papers are the test ones and a
    query ranks only candidates published no later than its citing paper. A model may be a
    stage of :func:`stage_scores` (``prefetch``, ``two-stage:M``, ``fused:M``); when one is
    asked for, ``prefetch_recall`` holds the prefetch's Recall@100 and @200. ``data``: the
    corpus's locations when already loaded (with the same ``outside``); ``prefetch``: the
    prefetch's scores of all of ``data.locations`` (:func:`openmsd.experiment.dev.
    prefetch_matrix`) when already computed; ``memo``: score matrices kept between calls (per
    held-out set: the baselines of a time split are computed once for all seeds)."""
    data = data or load(corpus, outside)
    _, test_locations, test = split_locations(data, test_fraction, seed, split)
    if not test_locations:
        raise CitrecEvalError(f"{corpus.root}: no test location (held out: {len(test)} citing "
                              "papers)")
    candidates = sorted(data.papers)
    column = {p: i for i, p in enumerate(candidates)}
    queries = Queries(test_locations, candidates, column)
    mask = candidate_mask(data, test_locations, candidates, split)
    result: dict[str, Any] = {"corpus": str(corpus.root), "outside_references": outside,
                              "split": split, "candidates": len(candidates),
                              "test_locations": len(test_locations),
                              "test_fraction": test_fraction, "seed": seed,
                              "held_out_citing_papers": len(test), "models": {}}
    cache: dict[str, np.ndarray] = {} if memo is None else memo.setdefault(
        "\n".join(sorted(test)), {})
    if prefetch is not None:
        row_of = {id(loc): i for i, loc in enumerate(data.locations)}
        cache[PREFETCH] = prefetch[[row_of[id(loc)] for loc in test_locations]]

    def base(name: str) -> np.ndarray:
        if name not in cache:
            if name == "prefetch":
                cache[name] = stage_scores(name, base, depth)
            else:
                _check_split(name, test, test_fraction, seed)
                if log:
                    log(f"{name}: encoding {len(test_locations):,} queries and "
                        f"{len(candidates):,} candidates")
                rows = np.asarray(score_rows(name, data, queries), np.float64)
                cache[name] = np.where(mask, rows, -np.inf)
        return cache[name]

    def signals(model: str) -> dict[str, np.ndarray]:
        own = [loc.sentences[loc.at] for loc in test_locations]
        for feature, ranker in SENTENCE_SIGNALS.items():
            if feature not in cache:
                cache[feature] = score_rows(ranker, data, queries, texts=own)
        for feature, ranker in CONTEXT_SIGNALS.items():
            if feature not in cache:
                cache[feature] = score_rows(ranker, data, queries)
        key = f"manuscript:{model}"
        if key not in cache:
            cache[key] = _profile_rows(model, data, queries)
        if f"{GRAPH_FEATURES[0]}:{model}" not in cache:
            # the corpus's links but the test papers' (and each location's own paper's)
            cache.update((f"{f}:{model}", v) for f, v in graph_scores(
                data, test_locations, candidates, base("prefetch"), cache[key], test,
                split).items())
        return {**{f: cache[f] for f in (*SENTENCE_SIGNALS, *CONTEXT_SIGNALS)},
                "manuscript": cache[key],
                **{f: cache[f"{f}:{model}"] for f in GRAPH_FEATURES}}

    n_relevant = np.array([len(loc.cited) for loc in test_locations])
    for name in models:
        ranks = location_ranks(stage_scores(name, base, depth, signals=signals),
                               test_locations, column)
        result["models"][_label(name)] = summarise(n_relevant, metric_values(ranks))
    if "prefetch" in cache:
        ranks = location_ranks(cache["prefetch"], test_locations, column)
        result["prefetch_recall"] = {f"Recall@{k}": round(float(np.mean(recall(ranks, k))), 4)
                                     for k in (10, 100, 200)}
    return result


def _label(name: str) -> str:
    kind, _, model = name.partition(":")
    if kind in ("two-stage", "fused") and model:
        return f"{kind}:{_label(model)}"
    return Path(name).name if Path(name).is_dir() else name


def table3(result: dict[str, Any]) -> str:
    """The result as a Markdown table: Recall@10 and MAP@10 per group (MRR and nDCG@10 of all
    queries), one row per model."""
    groups = list(GROUPS)
    head = ["model", *[f"{g} {m}" for g in groups for m in ("R@10", "MAP@10")],
            "MRR", "nDCG@10"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def cell(value: float | None) -> str:
        return "–" if value is None else f"{100 * value:.1f}"

    for name, scores in result["models"].items():
        cells = [cell(scores[g][m]) for g in groups for m in ("Recall@10", "MAP@10")]
        cells += [cell(scores["positive>=1"]["MRR"]), cell(scores["positive>=1"]["nDCG@10"])]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    counts = ", ".join(f"{g}: {result['models'][next(iter(result['models']))][g]['n']}"
                       for g in groups) if result["models"] else ""
    lines.append("")
    if result.get("prefetch_recall"):
        lines.append(f"Prefetch ({PREFETCH}): " + ", ".join(
            f"{k} {100 * v:.1f}" for k, v in result["prefetch_recall"].items()) + ".")
    lines.append(f"{result['test_locations']} test locations ({counts}) from "
                 f"{result['held_out_citing_papers']} held-out citing papers; "
                 f"{result['candidates']:,} candidates; scores in %.")
    return "\n".join(lines)


def plot_table3(result: dict[str, Any], path: Path, title: str = "") -> None:
    """Recall@10 and MAP@10 per model and group as grouped bars (PNG)."""
    import matplotlib  # optional: the eval extra; matplotlib takes ~0.5 s to import

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # optional: the eval extra; matplotlib takes ~0.5 s to import

    groups = [g for g in GROUPS if any(s[g]["n"] for s in result["models"].values())]
    names = list(result["models"])
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
    width = 0.8 / max(1, len(names))
    for ax, metric in zip(axes, ("Recall@10", "MAP@10"), strict=True):
        for j, name in enumerate(names):
            values = [100 * (result["models"][name][g][metric] or 0) for g in groups]
            bars = ax.bar([i + j * width for i in range(len(groups))], values, width,
                          label=name)
            ax.bar_label(bars, fmt="%.0f", fontsize=7)
        ax.set_xticks([i + width * (len(names) - 1) / 2 for i in range(len(groups))])
        n = next(iter(result["models"].values()))
        ax.set_xticklabels([f"{g}\n(n={n[g]['n']})" for g in groups])
        ax.set_title(metric)
        ax.set_ylabel("%")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=min(len(names), 5),
               frameon=False)
    fig.suptitle(title or f"{result['corpus']}: {result['candidates']:,} candidates")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(path, dpi=120, format="png")
    plt.close(fig)


def write_citrec_report(result: dict[str, Any], out_file: Path) -> list[Path]:
    """Write ``result`` as JSON to ``out_file``, its Table 3 as Markdown beside it
    (``FILE.md``) and as bars (``FILE.png``), each atomically; the paths written."""
    write_json(out_file, result)
    markdown, picture = out_file.with_suffix(".md"), out_file.with_suffix(".png")
    with atomic_path(markdown) as tmp:
        tmp.write_text(table3(result) + "\n")
    with atomic_path(picture) as tmp:
        plot_table3(result, tmp)
    return [out_file, markdown, picture]
