"""The adapter on the unarXive and S2ORC samples: citation contexts → the cited reference,
and as the dense member of citrec's prefetch, against its base e5, paired t-tests.

    # an adapter trained elsewhere, for the samples that cannot train their own (TALN's:
    # the commands of benchmarks/adapter_taln.py's docstring, then)
    openmsd train adapter corpus-taln
    python benchmarks/adapter_samples.py --workdir /tmp/adapter-samples \\
        --transfer corpus-taln/adapters/adapter-e5-small-multilingual

1. Each sample is built as a user builds it, in ``--workdir`` (outside the repository):
   ``openmsd ingest``, ``openmsd relations``, ``openmsd embed`` (e5-small-multilingual) and
   ``openmsd train adapter``. Recorded: its papers, references, in-corpus citations, contexts,
   the relations' DC / CC / BC pairs and the adapter command's exit status and error line.
   Also counted, never used: pairs of the sample's papers that share a reference outside it
   (by any identifier of the reference), the coupling that would exist if those papers were
   in the corpus.
2. The adapter measured is the sample's own where ``train adapter`` made one, else the one
   given with ``--transfer`` (trained on another corpus's citations: its head maps the same
   base's vectors), and says which.
3. The queries are split by citing paper with ``openmsd eval citrec``'s held-out draw
   (fraction 0.3, seed 0): the train papers' contexts first (the figure a choice would be made
   on: nothing here is tuned on the samples), then, once, the held-out papers' contexts:
   * citation contexts → the cited document (``benchmarks/context_retrieval.py``'s task and
     evaluation, that of ``openmsd eval retrieval``; ``--targets references`` for unarXive,
     whose references all point outside it; the corpus papers for S2ORC), the base through its
     ONNX backend, as the adapter's base: MAP, paired t-test of per-context AP;
   * ``openmsd eval citrec`` (outside references as candidates for unarXive): the prefetch
     (``bm25@same`` + e5, reciprocal-rank fusion) against ``bm25@same`` + the adapter: MAP@10
     and Recall@10, paired t-tests per location.

Writes ``benchmarks/results/adapter_samples.json`` (``--record NAME`` to name it otherwise).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
from context_retrieval import evaluate as rank_contexts
from context_retrieval import task
from record import write_record
from scipy import stats

from openmsd.corpus import Corpus
from openmsd.eval import PREFETCH, CitrecEvalError, location_ranks, metric_values
from openmsd.eval import evaluate as evaluate_citrec
from openmsd.models import read_adapter
from openmsd.rank import CitrecData, CitrecDataError, load_citrec, split_locations

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
SAMPLES = {
    "unarxive": (SHARED / "unarxive-sample" / "arXiv_src_2212_086.jsonl", "references", True),
    "s2orc": (SHARED / "s2orc-sample" / "metadata_sample.jsonl", "papers", False),
}
"""name: (input file, context retrieval targets, citrec's outside references)."""
BASE = "e5-small-multilingual"
HELD_OUT, SEED = 0.3, 0


def openmsd(*args: str) -> subprocess.CompletedProcess:
    """An ``openmsd`` command as a user runs it (its output kept, its exit status not
    checked)."""
    return subprocess.run(["openmsd", *args], capture_output=True, text=True)


def build(source: Path, corpus: Path) -> dict[str, Any]:
    """ingest, relations, embed and train adapter; what each made or said."""
    steps: dict[str, Any] = {}
    for name, args in (("ingest", ["ingest", str(source), "--out", str(corpus)]),
                       ("relations", ["relations", str(corpus)]),
                       ("embed", ["embed", str(corpus), "--model", BASE]),
                       ("train adapter", ["train", "adapter", str(corpus), "--json"])):
        started = time.perf_counter()
        done = openmsd(*args)
        steps[name] = {"returncode": done.returncode,
                       "seconds": round(time.perf_counter() - started, 1)}
        if done.returncode != 0:
            steps[name]["error"] = done.stderr.strip().splitlines()[-1]
            print(f"{corpus.name}: openmsd {name}: {steps[name]['error']}", file=sys.stderr)
            if name != "train adapter":
                raise SystemExit(f"openmsd {' '.join(args)} failed")
        print(f"{corpus.name}: openmsd {name} ({steps[name]['seconds']} s)", file=sys.stderr,
              flush=True)
    return steps


def links(corpus: Corpus) -> dict[str, Any]:
    """The sample's counts: papers, references, in-corpus citations, contexts, the relations'
    pairs, and the pairs of its papers sharing an outside reference."""
    manifest = json.loads((corpus.root / "manifest.json").read_text())
    relations = json.loads((corpus.root / "relations" / "relations.json").read_text())
    references = corpus.table_path("references")
    shared = duckdb.connect().execute(f"""
        WITH r AS (SELECT DISTINCT citing_id, unnest(targets) AS target
                   FROM read_parquet('{references}')
                   WHERE cited_id IS NULL AND citing_id IN
                         (SELECT paper_id FROM read_parquet('{corpus.table_path("papers")}')))
        SELECT count(*) FROM (SELECT DISTINCT a.citing_id, b.citing_id FROM r a JOIN r b
                              ON a.target = b.target AND a.citing_id < b.citing_id)
        """).fetchone()[0]
    return {**manifest["build"]["counts"],
            "relations": {k: relations["counts"][k] for k in ("dc", "cc", "bc",
                                                              "pairs_in_splits")},
            "pairs_sharing_an_outside_reference": int(shared)}


def t_test(new: np.ndarray, old: np.ndarray) -> float | None:
    """Two-tailed paired t-test p of per-query values; None where they never differ."""
    p = float(stats.ttest_rel(new, old).pvalue)
    return round(p, 4) if math.isfinite(p) else None


def compare(base: dict[str, Any], adapter: dict[str, Any], metric: str) -> dict[str, Any]:
    ratio = adapter[metric] / base[metric] if base[metric] else None
    return {"base": round(base[metric], 4), "adapter": round(adapter[metric], 4),
            "ratio": round(ratio, 4) if ratio is not None else None}


def contexts(corpus: Corpus, targets: str, rankers: list[str], held_out: set[str],
             cache: dict) -> dict[str, Any]:
    """Citation contexts → the cited document, on the train papers' contexts, then the
    held-out papers' (the test read): MAP of each ranker, ratio and p of the adapter."""
    queries, docs, qrels = task(corpus, targets)
    if not queries:
        return {"queries": 0, "note": "no citation context cites a document of the task"}
    citing = {q: q.split("#", 1)[0] for q in queries} if targets == "references" else None
    if citing is None:  # papers: the context's citing paper is the corpus's
        raise SystemExit("contexts of corpus papers: the split by citing paper is not wired")
    out: dict[str, Any] = {"targets": targets, "documents": len(docs)}
    for part, keep in (("train", lambda q: citing[q] not in held_out),
                       ("test", lambda q: citing[q] in held_out)):
        chosen = {q: t for q, t in queries.items() if keep(q)}
        print(f"{corpus.root.name} contexts, {part}: {len(chosen)} queries", file=sys.stderr)
        found = rank_contexts(corpus, targets, rankers, chosen, docs,
                              {q: qrels[q] for q in chosen}, cache)
        base, adapter = (found[r] for r in rankers)
        out[part] = {"queries": len(chosen), "citing_papers": len({citing[q] for q in chosen}),
                     "MAP": compare(base, adapter, "MAP"),
                     "MRR": compare(base, adapter, "MRR"),
                     "Recall@10": compare(base, adapter, "Recall@10"),
                     "p_MAP": adapter[f"p_vs_{rankers[0]}"]}
    return out


def citrec(corpus: Corpus, data: CitrecData, outside: bool, adapter: str) -> dict[str, Any]:
    """``openmsd eval citrec``'s held-out locations (the test read): the prefetch with e5
    against the same fusion with the adapter, per-location paired t-tests."""
    fused = f"bm25@same+{adapter}"
    memo: dict[str, dict[str, np.ndarray]] = {}
    try:
        result = evaluate_citrec(corpus, ["prefetch", fused], HELD_OUT, SEED, outside,
                                 data=data, memo=memo)
    except CitrecEvalError as error:
        return {"error": str(error)}
    _, test_locations, _ = split_locations(data, HELD_OUT, SEED)
    column = {p: i for i, p in enumerate(sorted(data.papers))}
    (scores,) = memo.values()
    values = {name: metric_values(location_ranks(scores[key], test_locations, column))
              for name, key in (("prefetch", PREFETCH), (fused, fused))}
    label = next(k for k in result["models"] if k != "prefetch")
    every = {name: result["models"][key]["positive>=1"]
             for name, key in (("prefetch", "prefetch"), (fused, label))}
    return {"candidates": result["candidates"], "locations": result["test_locations"],
            "held_out_citing_papers": result["held_out_citing_papers"],
            "outside_references": outside,
            **{metric: {**compare(every["prefetch"], every[fused], metric),
                        "p": t_test(values[fused][metric], values["prefetch"][metric])}
               for metric in ("MAP@10", "Recall@10", "MRR")}}


def headline(numbers: dict[str, Any]) -> dict[str, str]:
    """The record's headline: what each sample's adapter command did, and the test figures
    of the adapter measured."""
    parts = []
    for name, row in numbers.items():
        counts = row["counts"]
        trained = row["commands"]["train adapter"]["returncode"] == 0
        adapter = "its adapter" if trained else "the transferred adapter"
        said = [f"{name}: {counts['papers']:,} papers, DC {counts['relations']['dc']} / CC "
                f"{counts['relations']['cc']} / BC {counts['relations']['bc']} in-corpus pairs"
                + ("" if trained else ", train adapter refuses")]
        test = row.get("contexts", {}).get("test")
        if test:
            said.append(f"contexts MAP e5 {test['MAP']['base']:.3f} → {adapter} "
                        f"{test['MAP']['adapter']:.3f} "
                        f"({test['MAP']['ratio']:.2f}×, p {test['p_MAP']}, "
                        f"{test['queries']:,} queries)")
        rec = row.get("citrec", {})
        if "MAP@10" in rec:
            said.append(f"citrec prefetch MAP@10 {rec['MAP@10']['base']:.3f} → "
                        f"{rec['MAP@10']['adapter']:.3f} ({rec['MAP@10']['ratio']:.2f}×, "
                        f"p {rec['MAP@10']['p']}, {rec['locations']:,} locations)")
        parts.append(", ".join(said))
    return {"headline": "; ".join(parts)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, default=None,
                        help="where the sample corpora are built (default: a temporary one)")
    parser.add_argument("--transfer", type=Path, default=None,
                        help="an adapter trained on another corpus, measured where a sample "
                             "cannot train its own")
    parser.add_argument("--record", default="adapter_samples")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="adapter-samples-"))
    workdir.mkdir(parents=True, exist_ok=True)
    transfer = read_adapter(args.transfer) if args.transfer else None
    numbers: dict[str, Any] = {}
    data: dict[str, Any] = {"workdir": str(workdir)}
    for name, (source, targets, outside) in SAMPLES.items():
        corpus_dir = workdir / name
        steps = build(source, corpus_dir)
        corpus = Corpus(corpus_dir)
        row: dict[str, Any] = {"commands": steps, "counts": links(corpus)}
        data[name] = {"source": str(source.relative_to(ROOT.parent)),
                      "papers": row["counts"]["papers"]}
        if steps["train adapter"]["returncode"] == 0:
            own = corpus_dir / "adapters" / f"adapter-{BASE}"
            adapter, origin = str(own), "the sample's own"
        elif transfer is not None:
            trained_on = transfer.meta.get("corpus", {}).get("root", "another corpus")
            adapter, origin = str(args.transfer), f"transfer: trained on {trained_on}'s citations"
        else:
            numbers[name] = row
            continue
        base = read_adapter(adapter).bases[0]["key"]
        meta = read_adapter(adapter).meta
        row["adapter"] = {"path": adapter, "origin": origin, "base": base,
                          "chosen": meta["training"]["chosen"],
                          "positives": meta["training"]["positives"],
                          "cross_validation_MAP": {
                              "identity": meta["selection"]["identity_map"],
                              "chosen": meta["selection"]["chosen_map"]}}
        try:
            locations: CitrecData | str = load_citrec(corpus, outside)
        except CitrecDataError as error:
            locations = str(error)
        held_out = (split_locations(locations, HELD_OUT, SEED)[2]
                    if isinstance(locations, CitrecData) else set())
        row["contexts"] = contexts(corpus, targets, [base, adapter], held_out, {})
        row["citrec"] = (citrec(corpus, locations, outside, adapter)  # the test read
                         if isinstance(locations, CitrecData) else {"error": locations})
        numbers[name] = row
        print(json.dumps(row, indent=1), file=sys.stderr, flush=True)
        (workdir / "numbers.json").write_text(json.dumps(numbers, indent=1))  # kept if the
        # record cannot be written
    numbers.update(headline(numbers), peer=f"its base, {BASE} (ONNX), on the same queries",
                   headline_means=(
                       "The adapter against its base e5 on the unarXive and S2ORC samples: "
                       "citation contexts of held-out citing papers → the cited reference "
                       "(MAP), and as the dense member of citrec's prefetch (MAP@10); "
                       "paired t-tests. Where a sample has too few in-corpus links to train "
                       "its own, the adapter trained on TALN's citations is measured."))
    path = write_record(args.record, numbers, data=data, load_before=load_before, notes=(
        "Nothing is tuned on the samples (the adapter measured is fixed before they are "
        "read). Each sample's queries were split by citing paper with eval citrec's held-out "
        "draw (0.3, seed 0); the held-out papers' contexts and citrec locations (the test "
        "split) were read once, by this run, after the train papers' contexts."))
    print(path)


if __name__ == "__main__":
    main()
