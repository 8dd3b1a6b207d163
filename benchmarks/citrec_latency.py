"""Latency of citation recommendation for one paragraph against a 100,000-paper index.

The corpus and its index are ``server_load.py``'s (generated OpenAlex works ingested with
``openmsd ingest``, seeded clustered 512-d unit vectors stored as the ``muse-v3`` vectors,
HNSW or flat index; cached in ``--cache``). A real paragraph with two citation markers is
recommended for with :func:`openmsd.search.recommend.recommend` and the real ``muse-v3``
encoder (end to end: sentences, contexts, encoding, search, result metadata, driver
sentences). Encoding is the part that depends on the model, not on the index: the same
paragraph's query encoding is also timed for ``e5-small-multilingual`` and for any
``--citrec`` model directories (MP-BERT4CR: 30-sentence macro contexts). Prints one JSON
object (median and p95 over ``--repeats`` runs, after one warm-up):

    python benchmarks/citrec_latency.py --papers 100000 --cache /tmp/server-load \
        --citrec /tmp/citrec/models/taln-mpt-src-tgt-dyn --json /tmp/citrec-latency.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from openmsd.corpus import Corpus
from openmsd.index import load_index
from openmsd.models import load_model
from openmsd.search import CitationRequest, recommend_citations

sys.path.insert(0, str(Path(__file__).parent))
from server_load import MODEL, build_corpus

PARAGRAPH = (
    "Dependency parsing assigns each word of a sentence its syntactic head. Transition-based "
    "parsers build the tree with a sequence of shift and reduce actions and run in linear "
    "time [4]. Graph-based parsers score every possible arc and search for the best tree "
    "(McDonald et al., 2005). Both families were compared on many languages, French included. "
    "Neural networks now provide the features of both.")


def timed(call: Callable[[], object], repeats: int) -> dict[str, float]:
    call()  # warm-up: model loading, caches
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - start)
    return {"median_ms": round(1000 * float(np.median(seconds)), 1),
            "p95_ms": round(1000 * float(np.percentile(seconds, 95)), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/server-load"))
    parser.add_argument("--kind", default="hnsw")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--citrec", type=Path, action="append", default=[])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    corpus = Corpus(build_corpus(args.cache / f"n{args.papers}", args.papers, args.kind, MODEL))
    index = load_index(corpus, MODEL)
    encoder = load_model(MODEL)
    result = {"papers": index.index.ntotal, "index": args.kind, "sentences": 5, "locations": 2,
              "k": 10}
    result["recommend_muse-v3"] = timed(
        lambda: recommend_citations(corpus, CitationRequest(PARAGRAPH, MODEL, 10, explain=True),
                                    encoder, index),
        args.repeats)
    result["recommend_muse-v3_no_drivers"] = timed(
        lambda: recommend_citations(corpus, CitationRequest(PARAGRAPH, MODEL, 10, explain=False),
                                    encoder, index),
        args.repeats)
    queries = np.random.default_rng(0).standard_normal((2, index.index.d)).astype(np.float32)
    result["index_search_2_queries"] = timed(lambda: index.search(queries, 10), args.repeats)
    contexts = ["Dependency parsing assigns each word of a sentence its syntactic head. "
                "Transition-based parsers build the tree with a sequence of shift and reduce "
                "actions and run in linear time. Graph-based parsers score every possible arc."] * 2
    for name in ["e5-small-multilingual", *map(str, args.citrec)]:
        model = load_model(name)
        texts = contexts
        if hasattr(model, "supplemental"):  # MP-BERT4CR: 27 earlier sentences + 3
            texts = ["\n".join([PARAGRAPH.split(". ")[0] + "."] * model.supplemental
                               + [contexts[0]])] * 2
        result[f"encode_2_queries_{Path(name).name}"] = timed(
            lambda m=model, t=texts: m.encode(t, "query"), args.repeats)
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
