"""The neighbourhood picture and the watch feed, timed: drawing N = 30 and N = 100 related
papers (neighbourhood, layout, SVG, PNG) on the demo corpus and on a 100,000-paper corpus
(generated works and vectors: synthetic), and watching 1,000 new papers for a 500-seed
library at 100,000 papers. Each figure has its peer measured in the same run: the ranking
that produced the related papers (the picture's cost beside it), and ``related --seeds`` over
the whole index for the same library (the watch's).

    python benchmarks/graph_watch.py --demo demo-corpus --root /tmp/graph-watch

The 100,000-paper corpus is built under ``--root`` once (reused after): works from
``ingest_throughput.generate``, seeded clustered vectors (``search_index.generate``), a
flat index (as ``server_load.py`` builds its corpus). The 1,000 new papers are marked new in
the corpus's arrival record (the watch's state says it last looked before they came), which
is what an update that brings them leaves.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from openmsd.corpus import Corpus
from openmsd.index import build_index, load_index
from openmsd.ingest import ingest
from openmsd.io import ParquetSink, arrow_reader, write_json
from openmsd.models import paper_input
from openmsd.present import atom, build_neighbourhood, digest_html, draw, save, svg
from openmsd.rank import default_dense
from openmsd.search import (
    arrivals,
    related_papers,
    related_to_library,
    seed_set_name,
    watch_library,
)
from openmsd.vectors import text_hash, vector_key, vector_schema, vectors_dir

sys.path.insert(0, str(Path(__file__).parent))
from ingest_throughput import generate as generate_works
from record import write_record
from search_index import generate as generate_vectors

DIM = 512


def build_corpus(root: Path, papers: int, key: str) -> Path:
    """A corpus of ``papers`` generated works under ``root`` with seeded clustered vectors
    stored as ``key``'s and a flat index (each step skipped when already done)."""
    corpus_dir = root / "corpus"
    if not (corpus_dir / "manifest.json").exists():
        root.mkdir(parents=True, exist_ok=True)
        works = root / "works.jsonl.gz"
        started = time.time()
        generate_works(works, papers)
        ingest([works], corpus_dir, None, False)
        print(f"generated and ingested {papers:,} works in {time.time() - started:.0f} s",
              flush=True)
    corpus = Corpus(corpus_dir)
    if (corpus_dir / "index" / key / "papers.parquet").exists():
        return corpus_dir
    ids, hashes = [], []
    for batch in arrow_reader(corpus.connect(), "SELECT paper_id, title, abstract FROM papers"):
        for paper_id, title, abstract in zip(*(batch[c].to_pylist() for c in
                                               ("paper_id", "title", "abstract")), strict=True):
            text = paper_input(title, abstract)
            if text:
                ids.append(paper_id)
                hashes.append(text_hash(text))
    vectors = generate_vectors(len(ids), DIM, clusters=2000, groups=50, noise=0.9, seed=0)
    table = pa.table({"paper_id": ids, "text_hash": hashes,
                      "vector": pa.FixedSizeListArray.from_arrays(vectors.reshape(-1), DIM)},
                     schema=vector_schema(DIM))
    directory = vectors_dir(corpus, key)
    directory.mkdir(parents=True, exist_ok=True)
    with ParquetSink(directory / "part-00000.parquet", vector_schema(DIM)) as sink:
        sink.write(table)
    build_index(corpus, key, "flat")
    return corpus_dir


def _median_ms(run: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 1)


def picture_times(corpus: Corpus, key: str, query: str, sizes: list[int], repeats: int
                  ) -> dict[str, Any]:
    """Per N: the ranking (peer), the neighbourhood, the layout, the SVG and the PNG, in ms
    (medians), and how many nodes got a label."""
    index = load_index(corpus, key)
    out: dict[str, Any] = {}
    folder = Path(tempfile.mkdtemp())
    for n in sizes:
        results = related_papers(corpus, query, key, n, index=index)
        hood = build_neighbourhood(corpus, [query], results, index)
        picture = draw(hood)
        save(picture, folder / "warm.png")  # imports (networkx, matplotlib) done once
        rank_ms = _median_ms(lambda n=n: related_papers(corpus, query, key, n, index=index),
                             repeats)
        hood_ms = _median_ms(lambda r=results: build_neighbourhood(corpus, [query], r, index),
                             repeats)
        layout_ms = _median_ms(lambda h=hood: draw(h), repeats)
        svg_ms = _median_ms(lambda p=picture: svg(p), repeats)
        png_ms = _median_ms(lambda p=picture: save(p, folder / "p.png"), max(1, repeats // 2))
        total = hood_ms + layout_ms + svg_ms
        out[f"n{n}"] = {
            "nodes": len(hood.nodes), "edges": len(hood.edges),
            "labelled": sum(label is not None for label in picture.labels),
            "rank_ms": rank_ms, "neighbourhood_ms": hood_ms, "layout_ms": layout_ms,
            "svg_ms": svg_ms, "png_ms": png_ms, "svg_total_ms": round(total, 1),
            "svg_total_vs_rank": round(total / rank_ms, 2) if rank_ms else None}
        print(f"  N={n}: {out[f'n{n}']}", flush=True)
    return out


def watch_times(corpus: Corpus, key: str, seeds: int, new: int, repeats: int
                ) -> dict[str, Any]:
    """A ``seeds``-paper library watched when ``new`` papers are new: the watch (arrivals,
    ranking among the new), the feed files, and ``related --seeds`` over the whole index."""
    index = load_index(corpus, key)
    ids = list(index.ids)
    rng = random.Random(0)
    library = rng.sample(ids, seeds)
    rest = sorted(set(ids) - set(library))
    fresh = set(rng.sample(rest, new))
    known = arrivals(corpus)  # every paper recorded, at the build's time
    built = pc.max(known["arrived"]).as_py()
    later = pa.scalar(built + timedelta(hours=1), known.schema.field("arrived").type)
    marked = pc.if_else(pc.is_in(known["paper_id"], pa.array(sorted(fresh))), later,
                        known["arrived"])
    pq.write_table(known.set_column(1, "arrived", marked),
                   corpus.root / "watch" / "arrivals.parquet")
    name = seed_set_name(library, [])
    write_json(corpus.root / "watch" / f"{name}.json", {
        "name": name, "positive": library, "negative": [], "model": key,
        "watched": (built + timedelta(minutes=30)).isoformat(), "window_start": None,
        "new": 0})
    found = watch_library(corpus, library, [], key, 50, index=index, record=False)
    assert found.new == new, (found.new, new)
    watch_ms = _median_ms(lambda: watch_library(corpus, library, [], key, 50, index=index,
                                                record=False), repeats)
    feed_ms = _median_ms(lambda: (atom(found, "bench"), digest_html(found, "bench")), repeats)
    peer_ms = _median_ms(lambda: related_to_library(corpus, library, key, [], 50, index=index),
                         repeats)
    return {"seeds": seeds, "new": found.new, "listed": len(found.results),
            "watch_ms": watch_ms, "feed_files_ms": feed_ms, "related_seeds_ms": peer_ms,
            "watch_vs_related_seeds": round(watch_ms / peer_ms, 2) if peer_ms else None,
            "at": datetime.now(UTC).isoformat(timespec="seconds")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--demo", type=Path, default=Path("demo-corpus"))
    parser.add_argument("--root", type=Path, default=Path("/tmp/graph-watch"))
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=500)
    parser.add_argument("--new", type=int, default=1000)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    numbers: dict[str, Any] = {}
    data: dict[str, Any] = {}

    demo = Corpus(args.demo)
    key = default_dense(demo)
    query = demo.connect().execute(
        "SELECT paper_id FROM papers WHERE language = 'pt' ORDER BY paper_id LIMIT 1"
    ).fetchone()[0]
    print(f"demo corpus {args.demo} ({key}), query {query}", flush=True)
    numbers["demo"] = picture_times(demo, key, query, [30, 100], args.repeats)
    data["demo"] = {"corpus": str(args.demo), "papers": demo.read("papers", ["paper_id"])
                    .num_rows, "model": key, "query": query}

    big_key = vector_key("muse-v3", "torch")
    big = Corpus(build_corpus(args.root / f"n{args.papers}", args.papers, big_key))
    big_query = load_index(big, big_key).ids[12345 % args.papers]
    print(f"synthetic corpus {big.root} ({big_key}), query {big_query}", flush=True)
    numbers["synthetic_100k"] = picture_times(big, big_key, big_query, [30, 100],
                                              args.repeats)
    numbers["watch_100k"] = watch_times(big, big_key, args.seeds, args.new, args.repeats)
    print(f"  watch: {numbers['watch_100k']}", flush=True)
    data["synthetic_100k"] = {"corpus": str(big.root), "papers": big.read(
        "papers", ["paper_id"]).num_rows, "vectors": "seeded clustered 512-d (synthetic)",
        "index": "flat", "model_key": big_key}
    path = write_record("graph_watch", numbers, data=data, load_before=load_before,
                        synthetic=True,
                        notes="demo: the demo corpus (real SciELO/OpenAlex sample, e5 vectors); "
                              "synthetic_100k and watch_100k: generated works and vectors. "
                              "Times are medians in ms on a machine shared with other jobs "
                              "(load in the record); PNG via matplotlib. The watch's 1,000 new "
                              "papers are marked new in the arrival record.")
    print(f"record -> {path}")


if __name__ == "__main__":
    main()
