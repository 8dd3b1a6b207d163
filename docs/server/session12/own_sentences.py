"""The own sentences of real manuscripts' citation locations encoded with e5 as ``recommend``'s
rerank encodes them: one encoder call a sentence (session 11) against one call per token count
(``alike_groups``, session 12), per chunk of ``MAX_LOCATIONS`` locations as ``recommend`` takes
them. Prints the sentences, the encoder calls, ``time.process_time`` of each way (alternating
manuscript by manuscript, one process) and how many vectors are equal bit for bit::

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/server/session12/own_sentences.py \\
        ../shared/data/scielo-jats/*.xml ../shared/data/unarxive-sample/*.jsonl --papers 10

An unarXive JSONL file holds several papers: its first ``--papers`` are read.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from openmsd.corpus import identify
from openmsd.ingest import ManuscriptError, read_manuscript, without_markers
from openmsd.models import alike_groups, load_model
from openmsd.search.recommend import MAX_LOCATIONS, _paragraph_sentences, locations


def own_sentences(text: str) -> list[list[str]]:
    """Each chunk of a manuscript's locations: their own sentences, as ``recommend`` makes
    them."""
    language = identify([text[:2000]])[0][0]
    sentences, starts = _paragraph_sentences(text, language)
    where = locations(sentences, None, starts)
    return [[without_markers(sentences[i]) or sentences[i] for i in where[s:s + MAX_LOCATIONS]]
            for s in range(0, len(where), MAX_LOCATIONS)]


def unarxive_ids(path: Path, papers: int) -> list[str]:
    ids = []
    with open(path, "rb") as lines:
        for line in lines:
            ids.append(json.loads(line)["paper_id"])
            if len(ids) == papers:
                break
    return ids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("manuscripts", nargs="+", type=Path)
    parser.add_argument("--papers", type=int, default=10)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    encoder = load_model("e5-small-multilingual", "torch")
    texts, unread = [], []
    for path in args.manuscripts:
        for paper in (unarxive_ids(path, args.papers) if path.suffix == ".jsonl" else [None]):
            try:
                texts.append((f"{path.name}{':' + paper if paper else ''}",
                              read_manuscript(path, paper).text))
            except ManuscriptError as error:  # reported and counted, not read
                print(f"skipped: {error}")
                unread.append(str(error))
    encoder.encode(["warm up"], "query")
    cpu = {"one call a sentence": 0.0, "one call a token count": 0.0}
    calls = {"one call a sentence": 0, "one call a token count": 0}
    sentences = equal = 0
    worst = 0.0
    for _, text in texts:
        for chunk in own_sentences(text):
            start = time.process_time()
            alone = np.vstack([encoder.encode([s], "query") for s in chunk])
            cpu["one call a sentence"] += time.process_time() - start
            calls["one call a sentence"] += len(chunk)
            start = time.process_time()
            grouped = np.zeros_like(alone)
            groups = alike_groups(encoder, chunk, "query")
            for group in groups:
                grouped[group] = encoder.encode([chunk[i] for i in group], "query")
            cpu["one call a token count"] += time.process_time() - start
            calls["one call a token count"] += len(groups)
            sentences += len(chunk)
            equal += int((alone == grouped).all(axis=1).sum())
            worst = max(worst, float(np.abs(alone - grouped).max()))
    out = {"manuscripts": len(texts), "unreadable": unread, "sentences": sentences,
           "encoder_calls": calls,
           "cpu_seconds": {k: round(v, 2) for k, v in cpu.items()},
           "cpu_ratio": round(cpu["one call a token count"] / cpu["one call a sentence"], 3),
           "vectors_equal_bit_for_bit": equal, "largest_difference": worst,
           "torch_threads": __import__("torch").get_num_threads(),
           "load_average": os.getloadavg()[0]}
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
