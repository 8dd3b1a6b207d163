"""Papers/s and generated tokens/s of the enrichment backends on real abstracts.

Each backend gets the first N abstracts of one language from a corpus (``topn``'s task for
translators: the abstract's first ``--length`` tokens; ``summary64``/``summary128`` for
generators) and is timed end to end (model load excluded):

- ``apertium``: Debian's Apertium on Spanish abstracts (SciELO);
- ``http-apertium``: the same through ``openmsd.enrich.server`` and the HTTP backend (the
  cost of the OpenAI-compatible round trip);
- ``gemma``: Gemma-3-270M on French abstracts (TALN), batched ``--batch-size``.

    openmsd ingest ../shared/data/scielo-jats --out /tmp/scielo
    python benchmarks/enrich_throughput.py --corpus /tmp/scielo --language es --backend apertium \\
        --backend http-apertium
    python benchmarks/enrich_throughput.py --corpus /tmp/taln --language fr --backend gemma -n 16
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from pathlib import Path

import duckdb

from openmsd.enrich import SummaryTokenizer, generate_checked


def _serve_apertium(language: str) -> str:
    import socket

    import uvicorn

    from openmsd.enrich import Apertium, create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(Apertium(), language), host="127.0.0.1",
                                           port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}/v1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--language", default="es")
    parser.add_argument("--backend", action="append", required=True,
                        choices=["apertium", "http-apertium", "gemma"])
    parser.add_argument("-n", type=int, default=50)
    parser.add_argument("--length", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()
    papers = str(args.corpus / "papers.parquet").replace("'", "''")
    abstracts = [r[0] for r in duckdb.sql(
        f"SELECT abstract FROM read_parquet('{papers}') WHERE language = ? AND "
        "length(abstract) > 200 ORDER BY paper_id LIMIT ?",
        params=[args.language, args.n]).fetchall()]
    tokenizer = SummaryTokenizer()
    for name in args.backend:
        if name == "gemma":
            from openmsd.enrich import LocalGemma

            backend, task, passages = LocalGemma(), f"summary{args.length}", abstracts
            max_new = args.length + 16
        else:
            from openmsd.enrich import Apertium, OpenAICompatible

            backend = (Apertium() if name == "apertium"
                       else OpenAICompatible(_serve_apertium(args.language)))
            task = "translate"
            passages = [tokenizer.truncate(a, args.length) for a in abstracts]
            max_new = 2 * args.length
        started = time.perf_counter()
        results = []
        for i in range(0, len(passages), args.batch_size):
            chunk = passages[i:i + args.batch_size]
            results += generate_checked(backend, task, chunk, [args.language] * len(chunk),
                                        max_new)
        seconds = time.perf_counter() - started
        tokens = sum(g.tokens for g, _ in results)
        print(json.dumps({"backend": name, "language": args.language, "papers": len(results),
                          "rejected": sum(1 for _, r in results if r), "seconds": round(seconds, 2),
                          "papers_per_s": round(len(results) / seconds, 3),
                          "tokens_per_s": round(tokens / seconds, 2)}))


if __name__ == "__main__":
    main()
