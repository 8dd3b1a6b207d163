"""SDSM on TALN dev for each CPU build of e5-small-multilingual, as ``openmsd eval sdsm`` runs it.

Copies a TALN corpus with relations (never written to), then runs ``openmsd eval sdsm COPY -m
e5-small-multilingual:BACKEND ... --split dev --embed --json``: each build embeds the dev
pool's papers (``--embed``, as ``openmsd embed`` does) and is scored on the three tasks (MAP in
%), with a paired t-test on per-query AP against the float32 build (the first model). The
default build (``default_backend``) is labelled so.

    python benchmarks/embedding_sdsm_dev.py CORPUS --record
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

MODEL = "e5-small-multilingual"
BACKENDS = ("onnx-fp32", "onnx-sq8", "onnx-q4", "onnx", "torch")
TASKS = ("citation", "co-citation", "bib-coupling")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path, help="a TALN corpus with relations (read only)")
    parser.add_argument("--record", action="store_true",
                        help="write benchmarks/results/embedding_sdsm_dev.json")
    args = parser.parse_args()

    from openmsd.models import default_backend

    load_before = os.getloadavg()[0]
    models = [f"{MODEL}:{backend}" for backend in BACKENDS]
    with tempfile.TemporaryDirectory(prefix="sdsm-dev-") as work:
        copy = shutil.copytree(args.corpus, Path(work) / "corpus",
                               ignore=shutil.ignore_patterns("vectors", "index"))
        command = ["openmsd", "eval", "sdsm", str(copy), *[a for m in models for a in ("-m", m)],
                   "--split", "dev", "--embed", "--json"]
        summary = json.loads(subprocess.run(command, check=True, capture_output=True,
                                            text=True).stdout)
    default = default_backend(MODEL)
    numbers: dict[str, object] = {}
    for backend, name in zip(BACKENDS, models, strict=True):
        label = {default: f"{backend} (default)",
                 "torch": "torch (sentence-transformers)"}.get(backend, backend)
        figures = summary["models"][name]
        numbers[label] = {"average_map": round(figures["average"]["MAP"], 4),
                          **{task: round(figures[task]["MAP"], 4) for task in TASKS}}
    numbers["significance vs onnx-fp32"] = summary["significance"]["models"]
    for label, figures in numbers.items():
        if isinstance(figures, dict) and "average_map" in figures:
            print(f"{label:<40} avg MAP {figures['average_map']:6.2f}", file=sys.stderr)
    if args.record:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from record import write_record

        print(write_record(
            "embedding_sdsm_dev", numbers,
            data={"corpus": f"TALN ({args.corpus}, copied without its vectors)", "split": "dev",
                  "pool": summary["pool"], "relevant_pairs": summary["relevant_pairs"]},
            load_before=load_before,
            notes="MAP in %; every build embeds the dev pool's papers (openmsd eval sdsm "
                  "--embed); quality only, load-independent"), file=sys.stderr)


if __name__ == "__main__":
    main()
