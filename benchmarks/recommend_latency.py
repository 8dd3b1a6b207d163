"""Latency of ``recommend`` for a 30-location manuscript against a 100,000-paper corpus, and
each stage's share of it.

The corpus and its index are ``server_load.py``'s (generated OpenAlex works ingested with
``openmsd ingest``, seeded clustered 512-d vectors stored as the ``muse-v3`` vectors, HNSW
index; cached in ``--cache``, the same cache the load test uses). The manuscript is 30
sentences with a citation marker each, plus unmarked sentences between them, so that
:func:`openmsd.search.recommend.recommend` finds 30 citation locations; it is recommended for
end to end (whatever ranking ``recommend`` does by default) with the real ``muse-v3`` query
encoder (``--backend``), ``k=10``, with driver sentences (``explain``) and without; and with
``recommend``'s two-stage ranking forced on (what a trained MP-BERT4CR model gets by default:
the corpus's ``hybrid`` fusion prefetches 200 candidates a location, reranked by the cosine of
the query vector with each candidate's index vector, here muse-v3's; the machinery's cost does
not depend on which model's vectors those are, only the encoding does).

Stages are timed by wrapping the functions ``recommend`` calls (each wrapper calls the real
function and adds its wall time): language identification, sentence splitting, the
manuscript's own papers, query encoding, the index search, the result records, driver
sentences and co-citations; ``other`` is the rest. Prints one JSON object (median over
``--repeats`` runs after one warm-up; shares of the median run's total; its CPU seconds, the
steadier figure on a shared machine)::

    python benchmarks/recommend_latency.py --papers 100000 --cache /tmp/server-load \\
        --json /tmp/recommend-latency.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from openmsd.corpus import Corpus
from openmsd.index import load_index
from openmsd.models import load_model
from openmsd.search import recommend as recommend_module

sys.path.insert(0, str(Path(__file__).parent))
from server_load import MODEL, build_corpus

TOPICS = ["dependency parsing", "machine translation", "speech recognition", "named entities",
          "word embeddings", "text classification", "question answering", "summarisation",
          "sentiment analysis", "part-of-speech tagging"]
#: The functions of :mod:`openmsd.search.recommend` timed as stages (those it has).
STAGES = {"identify": "language identification", "_paragraph_sentences": "sentences",
          "manuscript_papers": "the manuscript's own papers", "_results": "result records",
          "_drivers": "driver sentences", "_cocitations": "co-citations",
          "two_stage_hits": "two stages (prefetch + rerank)"}


def manuscript(locations: int = 30) -> str:
    """A manuscript with ``locations`` cited sentences (markers of three kinds) and an
    unmarked sentence after each."""
    sentences = []
    for i in range(locations):
        topic = TOPICS[i % len(TOPICS)]
        marker = (f"[{i + 1}]", f"(Smith et al., {2000 + i})",
                  f"\\cite{{ref{i}}}")[i % 3]
        sentences.append(f"Earlier work on {topic} with neural networks reported strong "
                         f"results on several languages {marker}.")
        sentences.append(f"We follow the same evaluation protocol for {topic} here.")
    return "A study of language processing methods\n\n" + " ".join(sentences)


class Stopwatch:
    """Wall time added up per stage, by wrappers around the real functions."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def wrap(self, stage: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[stage] = self.seconds.get(stage, 0.0) + time.perf_counter() - start
        return timed


def run(corpus: Corpus, encoder: Any, index: Any, text: str, explain: bool, repeats: int,
        two_stage: bool | None = None) -> dict[str, Any]:
    """``recommend`` of ``text`` ``repeats`` times (after a warm-up): the median total and each
    stage's seconds and share in the median run."""
    watch = Stopwatch()
    originals = {name: getattr(recommend_module, name) for name in STAGES
                 if hasattr(recommend_module, name)}
    encode, search = encoder.encode, index.search
    runs = []
    try:
        for name, function in originals.items():
            setattr(recommend_module, name, watch.wrap(STAGES[name], function))
        encoder.encode = watch.wrap("query encoding", encode)
        index.search = watch.wrap("index search", search)
        for i in range(repeats + 1):
            watch.seconds = {}
            start, cpu = time.perf_counter(), time.process_time()
            found = recommend_module.recommend_citations(corpus, text, encoder, MODEL, 10,
                                                         index=index, explain=explain,
                                                         two_stage=two_stage,
                                                         max_locations=None)
            total, cpu = time.perf_counter() - start, time.process_time() - cpu
            if i:  # the first run warms caches (paper records, citation graph, model)
                runs.append((total, dict(watch.seconds), len(found), cpu))
    finally:
        for name, function in originals.items():
            setattr(recommend_module, name, function)
        del encoder.encode, index.search
    total, stages, locations, cpu = sorted(runs, key=lambda r: r[0])[len(runs) // 2]
    stages["other"] = max(0.0, total - sum(stages.values()))
    return {"locations": locations, "seconds": round(total, 3), "cpu_seconds": round(cpu, 3),
            "p95_seconds": round(float(np.percentile([r[0] for r in runs], 95)), 3),
            "stages": {s: {"seconds": round(v, 3), "share": round(v / total, 3)}
                       for s, v in sorted(stages.items(), key=lambda kv: -kv[1])}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/server-load"))
    parser.add_argument("--kind", default="hnsw")
    parser.add_argument("--locations", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--backend", choices=["torch", "onnx"], default="torch")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    corpus = Corpus(build_corpus(args.cache / f"n{args.papers}", args.papers, args.kind, MODEL))
    index = load_index(corpus, MODEL)
    text = manuscript(args.locations)
    result: dict[str, Any] = {"papers": index.index.ntotal, "index": args.kind,
                              "locations_asked": args.locations, "k": 10}
    encoder = load_model(MODEL, args.backend)
    for explain, two_stage in ((True, None), (False, None), (False, True)):
        key = (f"{MODEL}{'' if explain else ' (no driver sentences)'}"
               f"{', two stages' if two_stage else ''}")
        result[key] = run(corpus, encoder, index, text, explain, args.repeats, two_stage)
        print(key, json.dumps(result[key]), flush=True)
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
