"""Peak memory of ``openmsd embed`` at two corpus sizes: does it stay flat as the corpus grows?

Ingests the first N papers of TALN (``../shared/data/taln/papers.jsonl``; each size its own
corpus in a temporary directory; beyond its 1,483 papers, TALN again under new ids, ``ID~2``,
``ID~3``, ..., so a corpus can span several chunks), then runs ``openmsd embed CORPUS`` (the
default model and backend) in a child process per size and reads its peak RSS (``ru_maxrss``
of that child, ``os.wait4``), its wall time and CPU seconds. ``embed`` reads the papers in
chunks of 2,048 and writes one vectors part per chunk, so its peak should not grow with the
corpus.

    python benchmarks/embed_memory.py --sizes 1483 6000 --record
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
TALN = ROOT.parent / "shared" / "data" / "taln" / "papers.jsonl"


def papers(lines: list[bytes], size: int) -> bytes:
    """The first ``size`` papers of TALN, its lines repeated under new ids (``ID~2``, ...)."""
    out = []
    for n in range(size):
        line = lines[n % len(lines)]
        if n >= len(lines):
            paper = orjson.loads(line)
            paper["id"] = f"{paper['id']}~{n // len(lines) + 1}"
            line = orjson.dumps(paper) + b"\n"
        out.append(line)
    return b"".join(out)


def run(command: list[str]) -> dict[str, float]:
    """Run ``command``; its wall seconds, CPU seconds and peak RSS (MiB). Fails loudly."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert child.stdout is not None
    output = child.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(command)} failed:\n{output[-2000:]}")
    return {"seconds": time.perf_counter() - start,
            "cpu_seconds": usage.ru_utime + usage.ru_stime,
            "peak_rss_mib": usage.ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 1483],
                        help="papers per corpus (the first N lines of TALN, then TALN again "
                             "under new ids)")
    parser.add_argument("--record", action="store_true",
                        help="write benchmarks/results/embed_memory.json")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    lines = TALN.read_bytes().splitlines(keepends=True)
    rows = []
    work = Path(tempfile.mkdtemp(prefix="embed-memory-"))
    try:
        for size in args.sizes:
            source = work / f"papers-{size}.jsonl"
            source.write_bytes(papers(lines, size))
            corpus = work / f"corpus-{size}"
            run([sys.executable, "-m", "openmsd", "ingest", str(source), "--out", str(corpus)])
            figures = run([sys.executable, "-m", "openmsd", "embed", str(corpus)])
            rows.append({"papers": size, **figures, "papers_per_s": size / figures["seconds"],
                         "load_after": os.getloadavg()[0]})
            print(f"{size:>7,} papers: {figures['seconds']:6.1f} s, "
                  f"{figures['cpu_seconds']:6.1f} CPU s, peak RSS "
                  f"{figures['peak_rss_mib']:,.0f} MiB (load {rows[-1]['load_after']:.1f})",
                  file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.record:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from record import write_record

        print(write_record("embed_memory", {"rows": rows},
                           data={"source": f"{TALN.name} (again under new ids beyond its "
                                           f"{len(lines):,} papers)", "sizes": args.sizes},
                           load_before=load_before,
                           notes="openmsd embed CORPUS, default model and backend; "
                                 "includes loading the model"), file=sys.stderr)


if __name__ == "__main__":
    main()
