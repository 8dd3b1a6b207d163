"""Peak memory of ``openmsd recommend`` on manuscripts of about 1, 5 and 20 MiB (the largest
allowed is 20 MiB), beside the peak of answering the demo paragraph (loading the corpus and the
model, three locations): does a long manuscript cost more than its text?

Builds the demo corpus (``openmsd demo --out TMP``: the shipped SciELO sample, the default model
and backend) unless ``--corpus`` names one, then writes each manuscript as Markdown from the
corpus's own abstracts (paragraphs of one abstract each, in a fixed random order), one sentence
in every ``--every-kib`` KiB ending with a citation marker ``[n]``, and runs ``openmsd recommend
CORPUS --manuscript M --json`` in a child process per manuscript, its answer written to a file.
Reads each child's peak RSS (``ru_maxrss``, ``os.wait4``), wall and CPU seconds, and counts the
locations answered.

    python benchmarks/recommend_memory.py --sizes 1 5 20 --record
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
PARAGRAPH = ROOT / "openmsd" / "data" / "demo-paragraph.md"


def manuscript(corpus: Path, size: int, every: int) -> str:
    """At most ``size`` bytes of Markdown (within an abstract of it) from ``corpus``'s
    abstracts, one paragraph each, the first sentence after every ``every`` bytes ending with a
    marker ``[n]``."""
    abstracts = [a for a in pq.read_table(corpus / "papers.parquet", columns=["abstract"])
                 ["abstract"].to_pylist() if a and len(a) > 200]
    rng = random.Random(0)
    parts: list[str] = []
    total = since = marked = 0
    while total < size:
        sentences = re.split(r"(?<=\.)\s+", " ".join(rng.choice(abstracts).split()))
        for i, sentence in enumerate(sentences):
            since += len(sentence.encode()) + 1
            if since >= every and sentence.endswith("."):
                marked += 1
                sentences[i] = f"{sentence[:-1]} [{marked}]."
                since = 0
        paragraph = " ".join(sentences)
        if parts and total + len(paragraph.encode()) + 2 > size:
            break  # no more than ``size``: the largest manuscript allowed is read whole
        parts.append(paragraph)
        total += len(paragraph.encode()) + 2
    return "\n\n".join(parts) + "\n"


def run(command: list[str], stdout: Path) -> dict[str, float]:
    """Run ``command`` with its standard output in ``stdout``; its wall seconds, CPU seconds
    and peak RSS (MiB). Fails loudly."""
    start = time.perf_counter()
    with stdout.open("wb") as handle:
        child = subprocess.Popen(command, stdout=handle, stderr=subprocess.PIPE)
        assert child.stderr is not None
        errors = child.stderr.read().decode(errors="replace")
        _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(command)} failed:\n{errors[-2000:]}")
    return {"seconds": round(time.perf_counter() - start, 1),
            "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1),
            "peak_rss_mib": round(usage.ru_maxrss / 1024, 1)}


def recommend(corpus: Path, path: Path, work: Path) -> dict[str, float]:
    """``openmsd recommend`` of ``path`` over ``corpus`` (JSON); its figures and locations."""
    answer = work / "answer.json"
    figures = run([sys.executable, "-m", "openmsd", "recommend", str(corpus), "--manuscript",
                   str(path), "--json"], answer)
    figures["locations"] = len(orjson.loads(answer.read_bytes()))
    answer.unlink()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1, 5, 20],
                        help="manuscript sizes in MiB (at most 20: the largest allowed)")
    parser.add_argument("--every-kib", type=float, default=8.0,
                        help="one citation marker in every this many KiB of text")
    parser.add_argument("--corpus", type=Path, help="a corpus with an index (default: the "
                                                    "demo corpus, built in a temporary folder)")
    parser.add_argument("--record", action="store_true",
                        help="write benchmarks/results/recommend_memory.json")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    work = Path(tempfile.mkdtemp(prefix="recommend-memory-"))
    try:
        corpus = args.corpus
        if corpus is None:
            corpus = work / "demo"
            run([sys.executable, "-m", "openmsd", "demo", "--out", str(corpus)],
                work / "demo.txt")
        peer = recommend(corpus, PARAGRAPH, work)
        print(f"demo paragraph: peak RSS {peer['peak_rss_mib']:,.0f} MiB, "
              f"{peer['seconds']:.1f} s", file=sys.stderr)
        rows = []
        for size in args.sizes:
            path = work / f"manuscript-{size:g}.md"
            path.write_text(manuscript(corpus, int(size * 2**20), int(args.every_kib * 1024)),
                            encoding="utf-8")
            figures = recommend(corpus, path, work)
            rows.append({"mib": size, "bytes": path.stat().st_size, **figures,
                         "over_peer_mib": round(figures["peak_rss_mib"]
                                                - peer["peak_rss_mib"], 1),
                         "load_after": round(os.getloadavg()[0], 2)})
            path.unlink()
            print(f"{size:>5g} MiB: {figures['locations']:,} locations, "
                  f"{figures['seconds']:7.1f} s, peak RSS {figures['peak_rss_mib']:,.0f} MiB "
                  f"(+{rows[-1]['over_peer_mib']:,.0f} over the demo paragraph; load "
                  f"{rows[-1]['load_after']:.1f})", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.record:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from record import write_record

        largest = max(rows, key=lambda row: row["peak_rss_mib"])
        print(write_record(
            "recommend_memory",
            {"headline": f"{largest['peak_rss_mib']:,.0f} MiB",
             "headline_means": f"the largest peak RSS of openmsd recommend over manuscripts of "
                               f"{', '.join(f'{s:g}' for s in args.sizes)} MiB (the "
                               f"{largest['mib']:g} MiB one's: {largest['locations']:,} "
                               f"locations), the model included",
             "peer": f"recommend of the demo paragraph (3 locations: loading the corpus and "
                     f"the model) in the same run, {peer['peak_rss_mib']:,.0f} MiB",
             "demo_paragraph": peer, "rows": rows,
             "largest_over_peer_mib": largest["over_peer_mib"]},
            data={"corpus": str(args.corpus or "openmsd demo (the shipped SciELO sample)"),
                  "manuscripts": "Markdown of the corpus's abstracts, one citation marker "
                                 f"in every {args.every_kib:g} KiB", "sizes_mib": args.sizes},
            load_before=load_before, synthetic=True,
            notes="openmsd recommend CORPUS --manuscript M --json (answer to a file), default "
                  "model and backend; peak RSS of the whole process, model included; the "
                  "machine is shared (load_before, load_after)"), file=sys.stderr)


if __name__ == "__main__":
    main()
