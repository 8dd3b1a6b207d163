"""The adapter figures on TALN: chosen on the train split only, the test split read once.

    openmsd ingest ../shared/data/taln/papers.jsonl ../shared/data/taln/parscit --out corpus-taln
    openmsd relations corpus-taln --top-languages 2 --idt 0.15 --odt 0.15 --dev 0.1
    openmsd embed corpus-taln && openmsd embed corpus-taln --model minilm-en
    python benchmarks/adapter_taln.py corpus-taln

1. ``openmsd train adapter CORPUS --base e5-small-multilingual`` (the command, timed as a user
   runs it): the head, its pull and its epochs chosen by cross-validation over the train
   split's held-out links (the dev split's queries are reported, too few to select on);
2. then, once, the SDSM tasks of IDT, ODT and both (``test``): the adapter against its base
   (average MAP, ratio, paired t-test over every (task, query) AP), and the untuned ``hybrid``
   with the adapter (what the corpus uses now) against the same fusion with the base in its
   place;
3. French → English Recall@1 of the adapted model (``benchmarks/crosslingual_taln.py``: a
   TALN paper's French abstract finds its own English abstract), against its base.

Writes ``benchmarks/results/adapter_taln.json`` (``--record NAME`` to name it otherwise).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb
from record import write_record
from scipy import stats

from openmsd.corpus import Corpus
from openmsd.eval import evaluate_sdsm
from openmsd.rank import fusion_spec

ROOT = Path(__file__).resolve().parents[1]


def pooled_t_test(a: Any, b: Any) -> dict[str, float]:
    """Paired t-test of AP over every (task, query) both per-query tables have."""
    con = duckdb.connect()
    con.register("a", a)
    con.register("b", b)
    x, y = zip(*con.execute('SELECT a."AP", b."AP" FROM a JOIN b USING (task, query)')
               .fetchall(), strict=True)
    test = stats.ttest_rel(x, y)
    return {"n": len(x), "t": round(float(test.statistic), 3), "p": float(test.pvalue),
            "mean_difference": round(100 * (sum(x) - sum(y)) / len(x), 3)}


def train(corpus: Path, bases: list[str]) -> tuple[dict[str, Any], float]:
    """``openmsd train adapter`` as a user runs it: its manifest and its wall time."""
    command = ["openmsd", "train", "adapter", str(corpus), "--json"]
    for base in bases:
        command += ["--base", base]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout), time.perf_counter() - started


def sdsm(corpus: Corpus, names: dict[str, str]) -> dict[str, Any]:
    """Per split: each ranker's average MAP (and per task), the adapter against its base and
    hybrid with against without the adapter."""
    out: dict[str, Any] = {}
    for split in ("idt", "odt", "test"):
        result = evaluate_sdsm(corpus, list(names.values()), split=split)
        models = result.summary["models"]
        row: dict[str, Any] = {"pool": result.summary["pool"],
                               "relevant_pairs": result.summary["relevant_pairs"]}
        for label, name in names.items():
            row[label] = {"MAP": models[name]["average"]["MAP"],
                          "queries": models[name]["average"]["n_queries"],
                          **{task: models[name][task]["MAP"]
                             for task in ("citation", "co-citation", "bib-coupling")}}
        for better, worse in (("adapter", "base"), ("hybrid_with_adapter", "hybrid_base")):
            row[f"{better}_vs_{worse}"] = {
                "ratio": round(row[better]["MAP"] / row[worse]["MAP"], 4),
                "t_test": pooled_t_test(result.per_query[names[better]],
                                        result.per_query[names[worse]])}
        out[split] = row
        print(split, json.dumps({k: row[k]["MAP"] for k in names}),
              json.dumps(row["adapter_vs_base"]), file=sys.stderr, flush=True)
    return out


def crosslingual(models: list[str], backend: str) -> dict[str, Any]:
    """``benchmarks/crosslingual_taln.py`` on ``models``: its JSON."""
    with tempfile.TemporaryDirectory() as temp:
        out = Path(temp) / "crosslingual.json"
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "crosslingual_taln.py"),
                        "--models", *models, "--backend", backend, "--out", str(out)],
                       check=True)
        return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--base", nargs="+", default=["e5-small-multilingual"])
    parser.add_argument("--record", default="adapter_taln")
    parser.add_argument("--no-crosslingual", action="store_true")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    manifest, wall = train(args.corpus, args.base)
    corpus = Corpus(args.corpus)
    adapter = manifest["name"]
    base = manifest["bases"][0]["key"]
    with_adapter = fusion_spec("hybrid", corpus).as_json()
    assert with_adapter.get("adapter", {}).get("name") == adapter, with_adapter
    without = fusion_spec("hybrid", corpus, dense=base).as_json()
    names = {"base": base, "adapter": adapter,
             "hybrid_base": "+".join(without["members"]),
             "hybrid_with_adapter": "hybrid"}
    figures = sdsm(corpus, names)  # the test split, read once
    selection = manifest["selection"]
    numbers: dict[str, Any] = {
        "chosen": manifest["training"]["chosen"],
        "cross_validation": {"identity_MAP": selection["identity_map"],
                             "chosen_MAP": selection["chosen_map"],
                             "queries": selection["queries"], "dev_used": selection["dev_used"],
                             "figures": selection["figures"]},
        "train_seconds_command": round(wall, 2),
        "train_seconds_in_process": manifest["training"]["seconds"],
        "train_rows": manifest["training"]["rows"],
        "hybrid_members": {"with_adapter": with_adapter["members"],
                           "without": without["members"]},
        "sdsm": figures,
    }
    if not args.no_crosslingual:
        dense = [b.partition("@")[0] for b in args.base]
        found = crosslingual([*dense, manifest["path"]],
                             manifest["bases"][0]["backend"])
        numbers["crosslingual"] = {
            "queries": found["queries"], "documents": found["documents"],
            "Recall@1": {m: r["Recall@1"] for m, r in found["rankers"].items()},
            "MRR": {m: r["MRR"] for m, r in found["rankers"].items()}}
    data = {"corpus": str(args.corpus), "papers_with_vectors":
            manifest["corpus"]["papers_with_vectors"],
            "train_papers": manifest["corpus"]["train_papers"],
            "bases": [b["key"] for b in manifest["bases"]],
            "source": "../shared/data/taln (papers.jsonl + parscit)"}
    path = write_record(args.record, numbers, data=data, load_before=load_before, notes=(
        "Settings chosen by cross-validation on the train split only; the IDT / ODT / test "
        "splits were read once, after training, by this run."))
    print(json.dumps({k: v for k, v in numbers.items() if k != "cross_validation"}, indent=1))
    print(path)


if __name__ == "__main__":
    main()
