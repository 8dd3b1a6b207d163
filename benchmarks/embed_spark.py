"""Embedding on Spark local[N] (N Python workers, one ONNX thread each) against the
single-process ``openmsd embed`` (N threads), on real abstracts, both with the model's default
backend (``--backend`` another).

The texts are real: TALN's French abstracts, their English translations and S2ORC's English
abstracts (``../shared/data``), cycled under distinct paper ids to reach ``--texts``. Each
engine runs in a child process of its own on a fresh copy of the corpus, the peer first; the
figure is texts/s of the whole command (model load and, for Spark, the JVM included) and per
core, and the ratio Spark / single process; and texts per CPU-second of each engine's whole
process tree (JVM and Python workers included), the fair measure on a shared machine where wall
time counts the other jobs. Vectors are compared per paper (minimum cosine). A size too long for
one sitting runs one engine per call (each engine's result is kept in ``--work``; the row is
printed once both are there; results are kept per backend and size)::

    nice -n 19 python benchmarks/embed_spark.py --texts 20000 --prepare
    python benchmarks/embed_spark.py --texts 20000 --cores 2 --engines single
    python benchmarks/embed_spark.py --texts 20000 --cores 2 --engines spark
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import orjson
from ingest_spark import ENGINES, run
from record import write_record

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"


def real_abstracts() -> list[tuple[str, str]]:
    """(title, abstract) of every real abstract in ../shared/data (TALN fr + en, S2ORC)."""
    found = []
    for line in (SHARED / "taln" / "papers.jsonl").read_bytes().splitlines():
        paper = orjson.loads(line)
        if paper.get("abstract"):
            found.append((paper.get("title") or "", paper["abstract"]))
        english = (paper.get("translations") or {}).get("en") or {}
        if english.get("abstract"):
            found.append((english.get("title") or "", english["abstract"]))
    for line in (SHARED / "s2orc-sample" / "metadata_sample.jsonl").read_bytes().splitlines():
        paper = orjson.loads(line)
        if paper.get("abstract"):
            found.append((paper.get("title") or "", paper["abstract"]))
    return found


def corpus(work: Path, n: int) -> Path:
    """A corpus of ``n`` papers with real titles and abstracts (cycled, distinct ids); reused
    when a complete one is there (``--prepare`` builds it outside the timed run)."""
    from openmsd.corpus import MANIFEST
    from openmsd.ingest import ingest

    target = work / f"corpus-{n}"
    if (target / MANIFEST).is_file():
        return target
    texts = real_abstracts()
    source = work / f"papers-{n}.jsonl"
    with open(source, "wb") as out:
        for i in range(n):
            title, abstract = texts[i % len(texts)]
            out.write(orjson.dumps({"id": f"bench-{i:07d}", "title": title,
                                    "abstract": abstract}) + b"\n")
    shutil.rmtree(target, ignore_errors=True)
    ingest([source], target)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--texts", type=int, default=20_000)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--model", default="e5-small-multilingual")
    parser.add_argument("--backend", default=None, help="default: the model's, as openmsd "
                        "embed runs it (onnx-sq8 for e5)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/spark19/embed_bench"))
    parser.add_argument("--out", type=Path, default=None, help="JSON results file")
    parser.add_argument("--prepare", action="store_true",
                        help="only build the corpus of --texts papers (run it niced, untimed)")
    parser.add_argument("--engines", nargs="*", choices=ENGINES, default=list(ENGINES),
                        help="engines to run now (each result is kept in --work; the row is "
                             "printed once both have run, in this call or an earlier one)")
    args = parser.parse_args()
    from openmsd.models import default_backend

    args.backend = args.backend or default_backend(args.model)
    args.work.mkdir(parents=True, exist_ok=True)
    base = corpus(args.work, args.texts)
    if args.prepare:
        return
    commands = {
        "single": [sys.executable, "-m", "openmsd.cli", "embed", str(args.work / "single"),
                   "--model", args.model, "--backend", args.backend, "--json"],
        "spark": [sys.executable, "-c", "import sys; from openmsd.corpus import local_spark; "
                  "from openmsd.models import embed_on_spark; "
                  f"embed_on_spark(sys.argv[1], sys.argv[2], {args.model!r}, {args.backend!r}, "
                  f"spark=local_spark({args.cores}))",
                  str(args.work / "spark" / "papers.parquet"),
                  str(args.work / "spark" / "vectors")],
    }
    # this checkout's openmsd in every child (Spark's Python workers too), not an installed one
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    spark_env = {**os.environ, "PYTHONPATH": path}
    env = {**spark_env, "OPENMSD_THREADS": str(args.cores)}
    for engine in args.engines:
        copy = args.work / engine
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(base, copy)
        load_before = os.getloadavg()[0]
        result = run(commands[engine], env if engine == "single" else spark_env)
        result["load_average_before"] = load_before
        result["load_average_after"] = list(os.getloadavg())
        (args.work / f"result-{engine}-{args.backend}-{args.texts}.json").write_text(
            json.dumps(result))
        print(f"{engine}: {result}", flush=True)
    found = {e: args.work / f"result-{e}-{args.backend}-{args.texts}.json" for e in ENGINES}
    if not all(path.is_file() for path in found.values()):
        return
    one, many = (json.loads(found[e].read_text()) for e in ENGINES)
    from openmsd.corpus import Corpus
    from openmsd.models import load_vectors
    from openmsd.vectors import vector_key

    key = vector_key(args.model, args.backend)
    ids_a, a = load_vectors(Corpus(args.work / "single"), key)
    ids_b, b = load_vectors(Corpus(args.work / "spark"), key)
    row = {"texts": args.texts, "cores": args.cores,
           "single_texts_s": args.texts / one["seconds"],
           "spark_texts_s": args.texts / many["seconds"],
           "single_texts_s_core": args.texts / one["seconds"] / args.cores,
           "spark_texts_s_core": args.texts / many["seconds"] / args.cores,
           "ratio": one["seconds"] / many["seconds"],
           "single_texts_cpu_s": args.texts / one["cpu_s"],
           "spark_texts_cpu_s": args.texts / many["cpu_s"],
           "ratio_cpu": one["cpu_s"] / many["cpu_s"],
           "single_peak_mib": one["peak_mib"], "spark_peak_mib": many["peak_mib"],
           "threads": {"single": f"1 process, ONNX Runtime intra-op {args.cores}, inter-op 1",
                       "spark": f"local[{args.cores}]: {args.cores} Python workers, "
                                "ONNX Runtime intra-op 1 (spark.task.cpus), inter-op 1"},
           "load_average_after": {"single": one["load_average_after"],
                                  "spark": many["load_average_after"]},
           "same_ids": ids_a == ids_b,
           "min_cosine": float(np.min((a * b).sum(axis=1))) if ids_a == ids_b else None}
    print(json.dumps(row, indent=2))
    write_record(
        "embed_spark",
        {"headline": f"{row['ratio']:.2f}×",
         "headline_means": f"texts/s per core of Spark local[{args.cores}] over the single "
                           "process (both the whole command, model load and JVM included)",
         "peer": f"openmsd embed, one process, --backend {args.backend}", **row},
        data={"texts": args.texts, "source": "real abstracts (TALN fr + en, S2ORC), cycled "
              "under distinct ids", "model": args.model, "backend": args.backend},
        load_before=one.get("load_average_before"),
        notes=f"Engines run in this call: {', '.join(args.engines)} (the peer first); a "
              "result from an earlier call is reused for the others.")
    if args.out:
        args.out.write_text(json.dumps(row, indent=2))


if __name__ == "__main__":
    main()
