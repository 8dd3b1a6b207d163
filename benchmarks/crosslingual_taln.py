"""Cross-lingual sanity on real data: TALN papers with a French abstract and the authors'
English translation. The French abstract is the query; the answer is the same paper's English
abstract among all English abstracts. Writes the three files of ``openmsd eval retrieval`` and
runs it for each registry model (Recall@1, MRR, ...).

    python benchmarks/crosslingual_taln.py --models bm25 muse-v3 e5-small-multilingual
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "taln" / "papers.jsonl"


def write_task(source: Path, out: Path) -> int:
    """queries.jsonl (French), corpus.jsonl (English), qrels.tsv (identity); returns pairs."""
    pairs = []
    for line in source.read_text(encoding="utf-8").splitlines():
        paper = json.loads(line)
        french = (paper.get("abstract") or "").strip()
        english = ((paper.get("translations") or {}).get("en") or {}).get("abstract") or ""
        if french and english.strip():
            pairs.append((paper["id"], french, english.strip()))
    with open(out / "queries.jsonl", "w") as q, open(out / "corpus.jsonl", "w") as c, \
            open(out / "qrels.tsv", "w") as r:
        for paper_id, french, english in pairs:
            q.write(json.dumps({"id": paper_id, "abstract": french}) + "\n")
            c.write(json.dumps({"id": paper_id, "abstract": english}) + "\n")
            r.write(f"{paper_id}\t{paper_id}\t1\n")
    return len(pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=["bm25", "muse-v3",
                                                         "e5-small-multilingual"])
    parser.add_argument("--papers", type=Path, default=DATA)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        task = Path(tmp)
        n = write_task(args.papers, task)
        print(f"{n} French queries, {n} English abstracts", file=sys.stderr)
        rows = []
        for model in args.models:
            start = time.perf_counter()
            result = subprocess.run(
                [sys.executable, "-m", "openmsd.cli", "eval", "retrieval",
                 "--queries", str(task / "queries.jsonl"), "--corpus", str(task / "corpus.jsonl"),
                 "--qrels", str(task / "qrels.tsv"), "--model", model],
                check=True, capture_output=True, text=True)
            metrics = json.loads(result.stdout)["metrics"]
            rows.append((model, metrics, time.perf_counter() - start))
    print(f"{'model':<24} {'R@1':>6} {'MRR':>6} {'nDCG@10':>8} {'R@10':>6} {'seconds':>8}")
    for model, m, seconds in rows:
        print(f"{model:<24} {m['Recall@1']:6.3f} {m['MRR']:6.3f} {m['nDCG@10']:8.3f} "
              f"{m['Recall@10']:6.3f} {seconds:8.0f}")


if __name__ == "__main__":
    main()
