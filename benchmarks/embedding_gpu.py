"""Embedding throughput on a GPU: the ``cuda-fp16`` backend against sentence-transformers fp32
on the same GPU.

Embeds N real abstracts (TALN titles + abstracts, French originals and English translations,
repeated to N; ``paper_input(title, abstract)``) with e5-small-multilingual through
:func:`openmsd.models.embed.encode_by_length`, the function ``openmsd embed`` runs:

* ``cuda fp16`` (backend ``cuda-fp16``, what ``openmsd embed`` runs where a GPU is found):
  PyTorch float16, texts in length buckets under a token budget from the GPU's free memory;
* ``st fp32`` (the peer): the same model as sentence-transformers loads it, float32, moved to
  the same GPU, batches of ``--batch-size``.

A warm-up call each, then the two take turns ``--repeats`` times; the median counts. It prints
abstracts/s, the ratio to the peer and the cosine of each text's vectors between the two; with
``--record`` it writes ``benchmarks/results/embedding_gpu.json`` with the GPU's name and memory
and its driver. Without a CUDA GPU it stops, unless ``--device
cpu`` asks for a trial run of the same code (never recorded).

    python benchmarks/embedding_gpu.py --texts 20000 --repeats 3 --record
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from embedding_throughput import MODEL, TALN, taln_texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--texts", type=int, default=20_000, help="how many abstracts")
    parser.add_argument("--batch-size", type=int, default=128, help="the peer's batch size")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs; the median counts")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                        help="cpu: a trial run of the same code (not recorded)")
    parser.add_argument("--record", action="store_true",
                        help="write benchmarks/results/embedding_gpu.json")
    args = parser.parse_args()

    import torch

    from openmsd.models import GPU_BACKEND, load_model
    from openmsd.models.backends.gpu import BucketedTorchEncoder
    from openmsd.models.embed import encode_by_length

    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("no CUDA GPU here: run it where there is one (or --device cpu to try it)")
    if args.record and args.device != "cuda":
        parser.error("--record needs the GPU (--device cuda)")
    load_before = os.getloadavg()[0]
    base = taln_texts(TALN, 4000)
    texts = [base[i % len(base)] for i in range(args.texts)]
    fast = load_model(MODEL, GPU_BACKEND)
    if args.device == "cpu":
        fast = BucketedTorchEncoder(load_model(MODEL, "torch"), device="cpu")
    peer = load_model(MODEL, "torch")
    peer.model.to(args.device)
    encoders = {"cuda fp16": fast, "st fp32": peer}
    for encoder in encoders.values():  # warm-up
        encode_by_length(encoder, texts[:256], args.batch_size)
    seconds: dict[str, list[float]] = {name: [] for name in encoders}
    vectors: dict[str, np.ndarray] = {}
    for repeat in range(args.repeats):
        for name, encoder in encoders.items():
            if args.device == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            vectors[name] = encode_by_length(encoder, texts, args.batch_size)
            seconds[name].append(time.perf_counter() - start)
            print(f"  repeat {repeat + 1} {name:<10} {seconds[name][-1]:7.2f} s", file=sys.stderr)
    cosine = (vectors["cuda fp16"] * vectors["st fp32"]).sum(axis=1)
    rows = []
    for name in encoders:
        median = statistics.median(seconds[name])
        rows.append({"method": name, "seconds": median, "texts_per_s": len(texts) / median,
                     "x_peer": statistics.median(seconds["st fp32"]) / median})
    print("| method | seconds | abstracts/s | × peer |\n|---|---:|---:|---:|")
    for row in rows:
        print(f"| {row['method']} | {row['seconds']:.2f} | {row['texts_per_s']:,.0f} | "
              f"{row['x_peer']:.2f} |")
    print(f"cosine fp16 to fp32: mean {cosine.mean():.5f}, min {cosine.min():.5f}")
    device = (torch.cuda.get_device_name() if args.device == "cuda" else "cpu")
    fp16 = rows[0]
    figures = {"headline": f"{fp16['texts_per_s']:,.0f} abstracts/s",
               "headline_means": "abstracts/s of the cuda-fp16 backend (what openmsd embed runs "
                                 "on a GPU), e5-small-multilingual",
               "peer": "sentence-transformers fp32 on the same GPU", "rows": rows,
               "seconds": seconds, "cos_mean": float(cosine.mean()),
               "cos_min": float(cosine.min()), "device": device,
               "token_budget": fast.token_budget(), "peer_batch_size": args.batch_size,
               "versions": {"torch": torch.__version__, "cuda": torch.version.cuda}}
    if args.device == "cuda":
        figures["gpu_memory_gib"] = round(torch.cuda.get_device_properties(0).total_memory
                                          / 2**30, 1)
    if args.record:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from record import write_record

        print(write_record("embedding_gpu", figures,
                           data={"texts": len(texts), "source": "TALN titles + abstracts (fr "
                                 "originals + en translations), repeated"},
                           load_before=load_before,
                           notes="both methods through encode_by_length, interleaved per "
                                 "repeat; times include tokenisation"), file=sys.stderr)


if __name__ == "__main__":
    main()
