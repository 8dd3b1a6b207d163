"""``openmsd robustness PAPERS... --model M... --out DIR``: the whole suite, models side by side.

Steps: read and sample the papers (:mod:`.papers`); tag them and make the 32 neighbours of each
(:mod:`.neighbours`); per model, embed titles, T+A and every neighbour once
(:mod:`.embedding_cache`), then measure (:mod:`.experiments`); write ``DIR/report.json``,
``DIR/report.html`` and the plots (:mod:`.report`). The report holds
``{"n_papers", "models": {M: {"task1", "task2", "neighbours": {CODE: {"category", "NN1_Ret",
"NN10_Ret", "AOP-10", "AOP-20", ...}}, "categories", "capability", ...}}, ...}``.

Texts are embedded as ``openmsd.models.formatting.paper_input`` formats a paper; the title
queries of Tasks I and II as queries (E5's ``query: ``), everything else as passages.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from openmsd.eval import hit_rate
from openmsd.io import write_json
from openmsd.models import DenseEncoder, UnsupportedBackendError, load_model, paper_input
from openmsd.robustness import experiments as ex
from openmsd.robustness.embedding_cache import EmbeddingCache
from openmsd.robustness.neighbours import CATEGORIES, NEIGHBOURS, neighbour_table
from openmsd.robustness.papers import load_papers, sample
from openmsd.vectors import model_slug


class RobustnessError(ValueError):
    """A model or input the suite cannot run on."""


def _round(value: float) -> float:
    return round(float(value), 2)


def neighbour_status(table: pd.DataFrame, papers: pd.DataFrame) -> dict[str, Any]:
    """Per code: its category, form and how many papers gave a neighbour (``ok``), nothing to
    change, an empty text, or were skipped; and which codes each language skipped."""
    counts = table.groupby(["code", "status"]).size().unstack(fill_value=0)
    status = {}
    for code, neighbour in NEIGHBOURS.items():
        row = counts.loc[code] if code in counts.index else pd.Series(dtype=int)
        status[code] = {"category": neighbour.category, "form": neighbour.form,
                        **{s: int(row.get(s, 0)) for s in ("ok", "unchanged", "empty",
                                                           "skipped")}}
    skipped = table[table["status"] == "skipped"].assign(
        language=lambda t: papers["language"].fillna("unknown").to_numpy()[t["paper"]])
    by_language = {str(lang): sorted(set(group["code"]), key=list(NEIGHBOURS).index)
                   for lang, group in skipped.groupby("language")}
    return {"neighbours": status, "skipped_by_language": by_language}


def measure_model(encoder: DenseEncoder, papers: pd.DataFrame, table: pd.DataFrame,
                  cache: EmbeddingCache, batch_size: int = 32, seed: int = 0
                  ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """All measurements for one model, and the title / T+A vectors (for the t-SNE plot)."""
    timing: dict[str, float] = {}
    start = time.perf_counter()
    documents_text = [paper_input(t, a) for t, a in zip(papers["title"], papers["abstract"],
                                                         strict=True)]
    titles_text = [paper_input(t, None) for t in papers["title"]]
    ok = table[table["status"] == "ok"]
    neighbour_text = [paper_input(t, a) for t, a in zip(ok["title"], ok["abstract"],
                                                        strict=True)]
    documents = cache.encode(encoder, documents_text, "passage", batch_size, "T+A")
    queries = cache.encode(encoder, titles_text, "query", batch_size, "titles (queries)")
    title_docs = cache.encode(encoder, titles_text, "passage", batch_size, "titles (passages)")
    neighbours = cache.encode(encoder, neighbour_text, "passage", batch_size, "neighbours")
    timing["embed"] = time.perf_counter() - start
    start = time.perf_counter()
    result: dict[str, Any] = {
        "task1": ex.alternative_self(queries, documents),
        "task2": ex.alternative_self_with_titles(queries, documents, title_docs),
        "similarity_originals": ex.similarity_summary(ex.pair_similarities(documents, seed=seed)),
    }
    per_code: dict[str, Any] = {}
    pooled: dict[str, dict[str, list[np.ndarray]]] = {
        c: {"ranks": [], "overlap": [], "pairs": []} for c in CATEGORIES}
    codes = ok["code"].to_numpy()
    paper_of = ok["paper"].to_numpy()
    for code, neighbour in NEIGHBOURS.items():
        rows = np.flatnonzero(codes == code)
        entry: dict[str, Any] = {"category": neighbour.category, "n": len(rows),
                                 "NN1_Ret": None, "NN10_Ret": None, "AOP-10": None,
                                 "AOP-20": None, "similarity": None}
        if len(rows):
            vectors, origin = neighbours[rows], paper_of[rows]
            ranks = ex.target_ranks(vectors, documents, origin)
            overlap = ex.neighbour_overlap(vectors, origin, documents, (10, 20))
            pairs = ex.pair_similarities(vectors, seed=seed)
            entry.update({"NN1_Ret": _round(np.mean(hit_rate(ranks[:, None], 1)) * 100),
                          "NN10_Ret": _round(np.mean(hit_rate(ranks[:, None], 10)) * 100),
                          "AOP-10": _round(overlap[:, 0].mean()),
                          "AOP-20": _round(overlap[:, 1].mean()),
                          "similarity": ex.similarity_summary(pairs)})
            bucket = pooled[neighbour.category]
            bucket["ranks"].append(ranks)
            bucket["overlap"].append(overlap)
            bucket["pairs"].append(pairs)
        per_code[code] = entry
    categories: dict[str, Any] = {}
    for category, bucket in pooled.items():
        if not bucket["ranks"]:
            categories[category] = {"n": 0, "NN1_Ret": None, "NN10_Ret": None, "AOP-10": None,
                                    "AOP-20": None, "similarity": None}
            continue
        ranks, overlap = np.concatenate(bucket["ranks"]), np.vstack(bucket["overlap"])
        categories[category] = {
            "n": len(ranks), "NN1_Ret": _round(np.mean(ranks <= 1) * 100),
            "NN10_Ret": _round(np.mean(ranks <= 10) * 100),
            "AOP-10": _round(overlap[:, 0].mean()), "AOP-20": _round(overlap[:, 1].mean()),
            "similarity": ex.similarity_summary(np.concatenate(bucket["pairs"]))}
    result["neighbours"] = per_code
    result["categories"] = categories
    result["capability"] = ex.capability({c: v["AOP-20"] for c, v in categories.items()})
    timing["measure"] = time.perf_counter() - start
    result["timing_s"] = {k: round(v, 1) for k, v in timing.items()}
    result["texts"] = {"unique_embedded_now": cache.embedded,
                       "neighbour_texts": len(neighbour_text),
                       "unique_neighbour_texts": len(set(neighbour_text))}
    return result, {"titles": title_docs, "documents": documents}


def run_suite(paths: Sequence[str | Path], models: Sequence[str], out: Path,
              sample_size: int | None = 2000, seed: int = 0, language: str | None = "en",
              backend: str = "torch", batch_size: int = 32, tsne: bool = True,
              example_sources: Sequence[str | Path] | None = None) -> dict[str, Any]:
    """Run the suite on the papers of ``paths`` for each model; write the report into ``out``
    and return it. The report's example texts come from the papers of ``example_sources``
    (some of ``paths``) when named, else from any paper."""
    from openmsd.robustness.report import write_report  # lazy: loads matplotlib (~0.5 s)

    if not models:
        raise RobustnessError("name at least one model (--model)")
    begin = time.perf_counter()
    timing: dict[str, float] = {}
    sources = [str(p) for p in example_sources or []]
    if unknown := sorted(set(sources) - {str(p) for p in paths}):
        raise RobustnessError(f"example sources {', '.join(unknown)} are not among the inputs "
                              f"({', '.join(map(str, paths))})")
    loaded = load_papers(paths, language)
    papers = sample(loaded.papers, sample_size, seed)
    if len(papers) <= 20:
        raise RobustnessError(f"{len(papers)} papers: the suite needs more than 20 (AOP-20)")
    timing["load"] = time.perf_counter() - begin
    start = time.perf_counter()
    table = neighbour_table(papers, seed, progress=True)
    timing["tag_and_perturb"] = time.perf_counter() - start
    report: dict[str, Any] = {
        "n_papers": len(papers),
        "input": {"files": [str(p) for p in paths], "language": language, "sample": sample_size,
                  "seed": seed, "backend": backend, "example_sources": sources,
                  **loaded.summary()},
        **neighbour_status(table, papers),
        "models": {},
    }
    vectors: dict[str, dict[str, np.ndarray]] = {}
    for name in models:
        start = time.perf_counter()
        used = backend
        try:
            encoder = load_model(name, backend)
        except UnsupportedBackendError:  # a model without an ONNX path runs with torch
            used = "torch"
            encoder = load_model(name, used)
        if not isinstance(encoder, DenseEncoder):
            raise RobustnessError(f"model {name!r} gives no vectors; the suite needs a dense "
                                  "encoder (e5-small-multilingual, muse-v3, minilm-en, a "
                                  "SentenceTransformer directory)")
        slug = model_slug(name) + ("" if used == "torch" else f"-{used}")
        cache = EmbeddingCache(out / "cache" / slug)
        result, vectors[name] = measure_model(encoder, papers, table, cache, batch_size, seed)
        result["timing_s"]["load_and_total"] = round(time.perf_counter() - start, 1)
        result["backend"] = used
        report["models"][name] = result
    start = time.perf_counter()
    write_report(report, table, papers, vectors, out, tsne=tsne, seed=seed,
                 example_sources=sources)
    timing["report"] = time.perf_counter() - start
    timing["total"] = time.perf_counter() - begin
    report["timing_s"] = {k: round(v, 1) for k, v in timing.items()}
    write_json(out / "report.json", report)
    return report
