"""Latency of ``recommend`` for a 30-location manuscript against a 100,000-paper corpus, and
each stage's share of it, on the path that ships for a trained MP-BERT4CR model.

The corpus and its index are ``server_load.py``'s (generated OpenAlex works ingested with
``openmsd ingest``, seeded clustered 512-d vectors stored as the ``muse-v3`` vectors, HNSW
index; cached in ``--cache``, the same cache the load test uses). The manuscript is 30
sentences with a citation marker each, plus unmarked sentences between them, so that
:func:`openmsd.search.recommend.recommend_citations` finds 30 citation locations, ``k=10``,
all of them answered (``max_locations=None``).

Runs, one process, each a median over ``--repeats`` runs after one warm-up:

* **two stages** (``--citrec DIR``, a model ``train citrec`` saved with its learned rerank
  fusion: what ``recommend`` does by default with it): the corpus's ``hybrid`` fusion
  (``bm25@same`` + muse-v3, its muse-v3 query vectors encoded for real) prefetches 200
  candidates a location (``_prefetch``), and :func:`~openmsd.search.recommend.rerank_hits`
  orders them by the model's fusion of the prefetch rank, the cosine of the manuscript's
  finished content (the model's manuscript encoder, ``encode_profiles``) with each candidate's
  vector in the model's index, and the location's own sentence scored by ``bm25`` and by
  ``e5-small-multilingual`` (encoded for real); with driver sentences (the API's default) and
  without. The model's vectors of the 100,000 papers are seeded clustered unit vectors of its
  dimension in an exact in-memory index (the rerank reads one stored vector per candidate,
  the same cost from any index; a model index on disk would become the corpus's default dense
  model and change the load test's ``hybrid``); the e5 vectors the own-sentence scorer reads
  are stored in the corpus the same way (``server_load.store_vectors``) when absent; with
  ``--english``, minilm-en's too, so that the rerank's English features (minilm-en on the
  location's own sentence and its fundamental context, English pairs) and the untuned
  ``hybrid``'s ``minilm-en@en`` run as they do on a corpus embedded with minilm-en (each
  location's texts encoded for real);
* **two stages, one e5 call a sentence** (the batching's peer, the earlier path): the same
  with driver sentences, the e5 encoder made unable to count tokens
  (:func:`openmsd.models.alike_groups` then gives each sentence alone), so each location's own
  sentence is encoded in its own call, as before the own sentences were encoded a token count
  at a time; the ratio of the two is printed (``own_sentence_batching``);
* **the index alone** (the peer: ``recommend`` with muse-v3, no trained model), with driver
  sentences.

Every run recommends for a manuscript it has not seen (its sentences carry the run's number):
a frozen MP-BERT4CR keeps each sentence's vector once encoded, so the same manuscript again
would not be encoded again.

Stages are timed by wrapping the functions ``recommend`` calls (each wrapper calls the real
function and adds its wall time; a stage inside another is taken out of it): language
identification, sentence splitting, the manuscript's own papers, query encoding, the
manuscript profiles, the prefetch (its muse-v3 query encoding apart), the manuscript cosine,
the own-sentence BM25 and e5 scores, the rest of the rerank (each sentence's language, the
features, the fusion), the index search, the result records, driver sentences and
co-citations; ``other`` is the rest. Prints one JSON object (shares of the median run's total;
its CPU seconds, the steadier figure on a shared machine)::

    python benchmarks/recommend_latency.py --papers 100000 --cache /tmp/server-load \\
        --citrec MODEL_DIR --json /tmp/recommend-latency.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import faiss

from openmsd.corpus import Corpus
from openmsd.index import VectorIndex, load_index
from openmsd.models import load_model
from openmsd.rank import dense_members
from openmsd.search import corpus_scorer
from openmsd.search import recommend as recommend_module
from openmsd.vectors import vectors_dir

sys.path.insert(0, str(Path(__file__).parent))
from search_index import generate as generate_vectors
from server_load import MODEL, build_corpus, store_vectors

TOPICS = ["dependency parsing", "machine translation", "speech recognition", "named entities",
          "word embeddings", "text classification", "question answering", "summarisation",
          "sentiment analysis", "part-of-speech tagging"]
#: The functions of :mod:`openmsd.search.recommend` timed as stages.
STAGES = {"identify": "language identification", "_paragraph_sentences": "sentences",
          "manuscript_papers": "the manuscript's own papers",
          "related_results": "result records", "_drivers": "driver sentences",
          "_cocitations": "co-citations", "_prefetch": "prefetch (hybrid, 200 a location)",
          "_index_cosines": "rerank: manuscript cosine",
          "rerank_hits": "rerank: sentence languages, features, fusion"}
#: Timed per scorer: ``_pool_scores``, the own-sentence stage of the scorer it gets.
OWN_SENTENCE = "_pool_scores"
#: Stages that contain others: their time is given without their children's.
CHILDREN = {"rerank: sentence languages, features, fusion": [
                "prefetch (hybrid, 200 a location)", "rerank: manuscript cosine",
                "rerank: own-sentence bm25", "rerank: own-sentence e5 (encoding, scores)",
                "rerank: minilm-en, own sentence and context (encoding, scores)"],
            "prefetch (hybrid, 200 a location)": ["prefetch: muse-v3 query encoding"]}
#: The rerank stage's rankers (``openmsd.eval.SENTENCE_SIGNALS``, ``CONTEXT_SIGNALS``) by
#: stage; minilm-en where the corpus has its vectors (``--english``).
SENTENCE = {"rerank: own-sentence bm25": "bm25",
            "rerank: own-sentence e5 (encoding, scores)": "e5-small-multilingual",
            "rerank: minilm-en, own sentence and context (encoding, scores)": "minilm-en@en"}
E5_DIM = MINILM_DIM = 384
E5_STAGE = "rerank: own-sentence e5 (encoding, scores)"
TWO_STAGES = "two stages (trained model, learned rerank)"
ONE_BY_ONE = "two stages, one e5 call a sentence (the batching's peer)"


def manuscript(locations: int = 30, variant: int = 0) -> str:
    """A manuscript with ``locations`` cited sentences (markers of three kinds) and an
    unmarked sentence after each; ``variant`` makes every sentence another one."""
    sentences = []
    for i in range(locations):
        topic = TOPICS[i % len(TOPICS)]
        marker = (f"[{i + 1}]", f"(Smith et al., {2000 + i})",
                  f"\\cite{{ref{i}}}")[i % 3]
        sentences.append(f"Earlier work on {topic} with neural networks reported strong "
                         f"results on several languages in study {variant} {marker}.")
        sentences.append(f"We follow the same evaluation protocol {variant} for {topic} here.")
    return f"A study of language processing methods {variant}\n\n" + " ".join(sentences)


class Stopwatch:
    """Wall time added up per stage, by wrappers around the real functions."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def wrap(self, stage: str | Callable[..., str], function: Callable[..., Any]
             ) -> Callable[..., Any]:
        """``function`` timed as ``stage`` (or as the stage ``stage(*args)`` names)."""
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                name = stage if isinstance(stage, str) else stage(*args)
                self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start
        return timed

    def exclusive(self) -> dict[str, float]:
        """Each stage's seconds without those of the stages it contains (:data:`CHILDREN`)."""
        out = dict(self.seconds)
        for parent, children in CHILDREN.items():
            if parent in out:
                out[parent] -= sum(self.seconds.get(c, 0.0) for c in children)
        return out


@contextmanager
def timed_stages(watch: Stopwatch, targets: list[tuple[Any, str, str | Callable[..., str]]]
                 ) -> Iterator[None]:
    """Wrap ``getattr(owner, name)`` (a module's function, an object's method) as ``stage``
    for each target; put back afterwards."""
    saved = []
    try:
        for owner, name, stage in targets:
            saved.append((owner, name, vars(owner).get(name), name in vars(owner)))
            setattr(owner, name, watch.wrap(stage, getattr(owner, name)))
        yield
    finally:
        for owner, name, function, own in reversed(saved):
            if own:
                setattr(owner, name, function)
            else:
                delattr(owner, name)  # the wrapper over its class's method


@contextmanager
def counting_tokens(encoder: Any, counts: bool) -> Iterator[None]:
    """``encoder`` as it is (``counts``), or unable to say how many tokens a text has (its
    ``token_counts`` hidden: :func:`openmsd.models.alike_groups` then encodes each text alone)
    until the block ends."""
    if counts or not hasattr(encoder, "token_counts"):
        yield
        return
    encoder.token_counts = None  # an instance attribute over the method
    try:
        yield
    finally:
        del encoder.token_counts


def has_vectors(corpus: Corpus, model: str) -> bool:
    """Whether ``model``'s vectors of the papers are stored in the corpus."""
    return any(vectors_dir(corpus, model).glob("part-*.parquet"))


def model_index(corpus: Corpus, dim: int, seed: int = 1) -> VectorIndex:
    """An exact in-memory index of seeded clustered ``dim``-d unit vectors, one per paper of
    the corpus's muse-v3 index, in its order (a trained model's vectors of the papers)."""
    rows = load_index(corpus, MODEL).papers
    index = faiss.IndexFlatIP(dim)
    index.add(generate_vectors(rows.num_rows, dim, clusters=2000, groups=50, noise=0.9,
                               seed=seed))
    return VectorIndex(index, rows)


def run(corpus: Corpus, encoder: Any, index: VectorIndex, explain: bool, repeats: int,
        locations: int, two_stage: bool, alone: bool = False) -> dict[str, Any]:
    """``recommend`` of a new manuscript ``repeats`` times (after a warm-up): the median total
    and each stage's seconds and share in the median run. ``alone``: the own-sentence e5
    encoder cannot count tokens (one encoder call a sentence)."""
    watch = Stopwatch()
    targets: list[tuple[Any, str, str | Callable[..., str]]] = [
        (recommend_module, name, stage) for name, stage in STAGES.items()
        if hasattr(recommend_module, name)]
    targets += [(encoder, "encode", "query encoding"), (index, "search", "index search")]
    if two_stage:
        targets.append((encoder, "encode_profiles", "manuscript profiles"))
        prefetch = dense_members(corpus_scorer(corpus, "hybrid"))[0].encoder()
        targets.append((prefetch, "encode", "prefetch: muse-v3 query encoding"))
        stage_of = {id(corpus_scorer(corpus, name)): stage for stage, name in SENTENCE.items()
                    if name == "bm25" or has_vectors(corpus, name.partition("@")[0])}
        targets.append((recommend_module, OWN_SENTENCE,
                        lambda scorer, *_: stage_of.get(id(scorer), "rerank: own-sentence ?")))
    e5 = (dense_members(corpus_scorer(corpus, SENTENCE[E5_STAGE]))[0].encoder() if two_stage
          else None)
    runs = []
    with timed_stages(watch, targets), counting_tokens(e5, not alone):
        for i in range(repeats + 1):
            watch.seconds = {}
            text = manuscript(locations, i + 1000 * explain + 100 * two_stage + 10 * alone)
            start, cpu = time.perf_counter(), time.process_time()
            request = recommend_module.CitationRequest(
                text, encoder.name, 10, explain=explain, max_locations=None,
                two_stage=None if two_stage else False)
            found = [location.as_dict() for location in
                     recommend_module.recommend_citations(corpus, request, encoder, index)]
            total, cpu = time.perf_counter() - start, time.process_time() - cpu
            if i:  # the first run warms caches (paper records, citation graph, rankers)
                ranking = {location["ranking"] for location in found}
                runs.append((total, watch.exclusive(), len(found), cpu, ranking))
    total, stages, found, cpu, ranking = sorted(runs, key=lambda r: r[0])[len(runs) // 2]
    stages["other"] = max(0.0, total - sum(stages.values()))
    return {"locations": found, "ranking": sorted(ranking), "seconds": round(total, 3),
            "cpu_seconds": round(cpu, 3),
            "runs_seconds": [round(r[0], 3) for r in runs],
            "stages": {s: {"seconds": round(v, 3), "share": round(v / total, 3)}
                       for s, v in sorted(stages.items(), key=lambda kv: -kv[1])}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/server-load"))
    parser.add_argument("--kind", default="hnsw")
    parser.add_argument("--locations", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--backend", choices=["torch", "onnx"], default="torch")
    parser.add_argument("--citrec", type=Path, default=None,
                        help="A trained MP-BERT4CR model (train citrec) with its rerank "
                             "fusion; without it only the index-alone run is measured.")
    parser.add_argument("--english", action="store_true",
                        help="Store seeded minilm-en vectors of the papers when absent, so that "
                             "the rerank's English features (and the untuned hybrid's "
                             "minilm-en@en) run as on a corpus embedded with minilm-en. This "
                             "changes the corpus's hybrid for good: give it its own --cache (a "
                             "copy of the load test's, e.g. cp -al), not the load test's.")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    corpus = Corpus(build_corpus(args.cache / f"n{args.papers}", args.papers, args.kind, MODEL))
    result: dict[str, Any] = {"papers": load_index(corpus, MODEL).index.ntotal,
                              "index": args.kind, "locations_asked": args.locations, "k": 10}
    plans: list[tuple[str, Any, VectorIndex, bool, bool, bool]] = []
    if args.citrec is not None:
        citrec = load_model(str(args.citrec))
        if getattr(getattr(citrec, "settings", None), "rerank", None) is None:
            parser.error(f"--citrec {args.citrec}: no learned rerank fusion in its citrec.json "
                         "(train citrec fits one)")
        if not has_vectors(corpus, SENTENCE[E5_STAGE]):
            store_vectors(corpus, "e5-small-multilingual", E5_DIM)
        if args.english and not has_vectors(corpus, "minilm-en"):
            store_vectors(corpus, "minilm-en", MINILM_DIM)
        result["english"] = has_vectors(corpus, "minilm-en")
        index = model_index(corpus, citrec.dim)
        result["citrec"] = str(args.citrec)
        plans += [(TWO_STAGES, citrec, index, True, True, False),
                  (ONE_BY_ONE, citrec, index, True, True, True),
                  ("two stages, no driver sentences", citrec, index, False, True, False)]
    dense = load_model(MODEL, args.backend)
    plans.append((f"index alone ({MODEL}), the peer", dense, load_index(corpus, MODEL), True,
                  False, False))
    for key, encoder, index, explain, two_stage, alone in plans:
        result[key] = run(corpus, encoder, index, explain, args.repeats, args.locations,
                          two_stage, alone)
        print(key, json.dumps(result[key]), flush=True)
    peer = result[plans[-1][0]]["seconds"]
    result["ratio_to_peer"] = {key: round(result[key]["seconds"] / peer, 2)
                               for key, *_ in plans[:-1]}
    if args.citrec is not None:  # the batched own sentences against one e5 call a sentence
        now, before = result[TWO_STAGES], result[ONE_BY_ONE]
        result["own_sentence_batching"] = {
            "seconds_ratio": round(now["seconds"] / before["seconds"], 3),
            "cpu_ratio": round(now["cpu_seconds"] / before["cpu_seconds"], 3),
            "e5_stage_ratio": round(now["stages"][E5_STAGE]["seconds"]
                                    / before["stages"][E5_STAGE]["seconds"], 3)}
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
