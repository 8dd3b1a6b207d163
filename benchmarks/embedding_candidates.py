"""CPU builds of e5-small-multilingual against float32: mean cosine and SDSM MAP on TALN dev.

Builds each candidate from the cached float32 ONNX export (``onnx-fp32``), embeds the dev pool
of a TALN corpus with it (``openmsd ingest`` + ``relations``; the corpus is copied, never
written to) and scores it with :func:`openmsd.eval.sdsm.evaluate_sdsm`, the code of ``openmsd
eval sdsm``. Cosine: each dev paper's vector against the float32 build's. Candidates:

* ``int8 dynamic``: ``onnx``'s build (per-channel int8 weights, activations per tensor at run
  time, word embeddings int8); ``int8 reduce_range``: 7-bit weights;
* ``int8, X in fp32``: the same, leaving one kind of node in float32 (the word-embedding
  ``Gather``, the FFN down-projection, the attention output, the q/k/v projections, the FFN
  up-projection, the first and last layers);
* ``int8 static QDQ``: weights per channel, activations per tensor with ranges calibrated
  (min-max) on TALN train-split abstracts only;
* ``int8 per token, smoothed``: ``onnx-sq8``'s build (:mod:`openmsd.models.backends.smoothquant`:
  activations int8 per token after SmoothQuant, calibrated on the shipped sample's abstracts,
  none of TALN's);
* ``q4``: ``onnx-q4``'s build (4-bit ``MatMulNBits``).

Speed is not measured here: ``benchmarks/embedding_throughput.py`` times the shipped builds
paired with sentence-transformers.

    python benchmarks/embedding_candidates.py CORPUS --record
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

MODEL = "e5-small-multilingual"
KEY = f"{MODEL}@onnx"
TASKS = ("citation", "co-citation", "bib-coupling")
EXCLUDED = {
    "int8, word embeddings in fp32": lambda n: n.endswith("word_embeddings/Gather"),
    "int8, FFN down-projection in fp32": lambda n: n.endswith("/output/dense/MatMul")
    and "attention" not in n,
    "int8, attention output in fp32": lambda n: "attention/output/dense" in n,
    "int8, q/k/v in fp32": lambda n: any(f"/self/{p}/" in n for p in ("query", "key", "value")),
    "int8, FFN up-projection in fp32": lambda n: "intermediate/dense" in n,
    "int8, first and last layers in fp32": lambda n: "layer.0/" in n or "layer.11/" in n,
}

SHIPPED = {"int8 per token, smoothed (onnx-sq8)": "onnx-sq8", "q4": "onnx-q4"}
"""Candidates that are backends of ``openmsd embed``: their builds as shipped."""


def dynamic(source: Path, target: Path, exclude: list[str], reduce_range: bool = False) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(source, target, weight_type=QuantType.QInt8, per_channel=True,
                     reduce_range=reduce_range, op_types_to_quantize=["MatMul", "Gather"],
                     nodes_to_exclude=exclude, extra_options={"MatMulConstBOnly": True})


def static(source: Path, target: Path, texts: list[str], tokenizer: Any) -> None:
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.texts = iter(texts)

        def get_next(self) -> dict[str, np.ndarray] | None:
            text = next(self.texts, None)
            if text is None:
                return None
            e = tokenizer([text], truncation=True, max_length=512, return_tensors="np")
            return {k: e[k].astype(np.int64) for k in ("input_ids", "attention_mask")}

    pre = target.with_name("pre.onnx")
    quant_pre_process(str(source), str(pre), skip_symbolic_shape=True)
    quantize_static(pre, target, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    weight_type=QuantType.QInt8, activation_type=QuantType.QUInt8,
                    op_types_to_quantize=["MatMul"], calibrate_method=CalibrationMethod.MinMax,
                    extra_options={"MatMulConstBOnly": True})
    pre.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path, help="a TALN corpus with relations (read only)")
    parser.add_argument("--calibration", type=int, default=48,
                        help="train-split abstracts that calibrate the static build")
    parser.add_argument("--record", action="store_true",
                        help="write benchmarks/results/embedding_candidates.json")
    args = parser.parse_args()

    import onnx
    import onnxruntime as ort
    import pyarrow.parquet as pq
    from rich.progress import track

    from openmsd.corpus import Corpus
    from openmsd.eval.sdsm import evaluate_sdsm, load_pool
    from openmsd.models import embed_corpus, load_model, load_vectors
    from openmsd.models.embed import embed_text

    logging.getLogger().setLevel(logging.ERROR)  # quantize_* advise on the root logger
    load_before = os.getloadavg()[0]
    work = Path(tempfile.mkdtemp(prefix="candidates-"))
    corpus = Corpus(shutil.copytree(args.corpus, work / "corpus"))
    encoder = load_model(MODEL, "onnx-fp32")  # the float32 export the candidates start from
    source = encoder.directory / "model.onnx"
    pool = load_pool(corpus, "dev")
    splits = pq.read_table(corpus.root / "relations" / "splits.parquet").to_pylist()
    train = {row["paper_id"] for row in splits if row["split"] == "train"}
    rows = corpus.connect().execute("SELECT paper_id, title, abstract FROM papers "
                                    "ORDER BY paper_id").fetchall()
    calibration = [encoder.prefixes["passage"] + embed_text(title, abstract)
                   for paper_id, title, abstract in rows
                   if paper_id in train and embed_text(title, abstract)][:args.calibration]
    names = [n.name for n in onnx.load(str(source), load_external_data=False).graph.node
             if n.op_type in ("MatMul", "Gather")]

    def build(name: str) -> Path | None:
        target = work / "candidate.onnx"
        if name == "int8 dynamic":
            dynamic(source, target, [])
        elif name == "int8 reduce_range":
            dynamic(source, target, [], reduce_range=True)
        elif name in EXCLUDED:
            dynamic(source, target, [n for n in names if EXCLUDED[name](n)])
        elif name == "int8 static QDQ":
            static(source, target, calibration, encoder.tokenizer)
        elif name in SHIPPED:
            return load_model(MODEL, SHIPPED[name]).directory / "model.onnx"
        else:
            return source
        return target

    def score(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        encoder.session = ort.InferenceSession(str(path), options,
                                               providers=["CPUExecutionProvider"])
        shutil.rmtree(corpus.root / "vectors" / KEY, ignore_errors=True)
        embed_corpus(corpus, encoder, KEY, paper_ids=pool.ids)
        summary = evaluate_sdsm(corpus, [KEY], split="dev").summary["models"][KEY]
        ids, matrix = load_vectors(corpus, KEY)
        figures = {"average_map": summary["average"]["MAP"],
                   **{task: summary[task]["MAP"] for task in TASKS}}
        return figures, dict(zip(ids, matrix, strict=True))

    candidates = ["fp32", "int8 dynamic", "int8 reduce_range", *EXCLUDED, "int8 static QDQ",
                  *SHIPPED]
    results: dict[str, Any] = {}
    reference: dict[str, np.ndarray] = {}
    for name in track(candidates, description="candidates", console=None):
        figures, vectors = score(build(name))
        if name == "fp32":
            reference = vectors
        cosine = np.array([vectors[p] @ reference[p] for p in reference if p in vectors])
        results[name] = {"cos_mean": round(float(cosine.mean()), 6),
                         "cos_min": round(float(cosine.min()), 6), **figures,
                         "map_vs_fp32": round(figures["average_map"]
                                              - results.get("fp32", figures)["average_map"], 4),
                         "load": round(os.getloadavg()[0], 2)}
        print(f"{name:<40} cos {results[name]['cos_mean']:.5f}  MAP "
              f"{figures['average_map']:6.2f}", file=sys.stderr, flush=True)
    shutil.rmtree(work)
    if args.record:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from record import write_record

        print(write_record(
            "embedding_candidates", {"candidates": results},
            data={"corpus": str(args.corpus), "split": "dev", "pool": len(pool.ids),
                  "calibration": f"{len(calibration)} TALN train-split abstracts (static QDQ)"},
            load_before=load_before,
            notes="quality only (load-independent): mean/min cosine of each dev paper's vector "
                  "to the fp32 build's, SDSM avg MAP in %; speed: embedding_throughput"),
              file=sys.stderr)


if __name__ == "__main__":
    main()
