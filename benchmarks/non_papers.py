"""Records that are not papers: how many each corpus has, by kind and by what decided it, and
what ``related`` leaves out of the demo corpus's paper pages.

Each corpus is ingested as a user would (``openmsd ingest``): the demo sample shipped with
openmsd, and the shared samples in ``../shared/data`` (TALN with its ParsCit references, SciELO
JATS, S2ORC, unarXive). On the demo corpus (embedded with the default model, as ``openmsd
demo`` does) every paper's default ``related`` top ten is taken with and without
``--include-non-papers``: how many of its places non-papers held, and what is left out.

    python benchmarks/non_papers.py [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import Counter
from pathlib import Path

from record import write_record

from openmsd.corpus import Corpus
from openmsd.demo import SAMPLE
from openmsd.index import build_index
from openmsd.ingest import ingest
from openmsd.models import DEFAULT_MODEL, choose_backend, embed_corpus, load_model
from openmsd.rank import HYBRID_GRAPH
from openmsd.search import SearchService
from openmsd.vectors import vector_key

K = 10
#: A paper page of the demo corpus whose related papers, non-papers included, hold "Errata",
#: "Adendo" and an editorial.
PAGE = "10.1590/0101-3173.2022.v45n1.p159"


def corpora(data: Path) -> dict[str, list[Path]]:
    """The inputs of each corpus measured (those of ``data`` present)."""
    found = {"demo": sorted(p for p in SAMPLE.iterdir() if p.is_dir())}
    shared = {"taln": [data / "taln" / "papers.jsonl", data / "taln" / "parscit"],
              "scielo-jats": [data / "scielo-jats"],
              "s2orc-sample": [data / "s2orc-sample"],
              "unarxive-sample": [data / "unarxive-sample" / "arXiv_src_2212_086.jsonl"]}
    for name, inputs in shared.items():
        if all(p.exists() for p in inputs):
            found[name] = inputs
    return found


def kinds(corpus: Corpus) -> dict[str, object]:
    """Papers, and the non-papers by kind and by what decided (type, title, section,
    content)."""
    con = corpus.connect()
    rows = con.execute("SELECT kind, split_part(coalesce(kind_reason, ''), ' ', 1) AS basis, "
                       "count(*) FROM papers GROUP BY ALL").fetchall()
    by_kind: Counter[str] = Counter()
    by_basis: Counter[str] = Counter()
    for kind, basis, n in rows:
        by_kind[kind] += n
        if kind != "paper":
            by_basis[{"type": "source type", "title": "title", "section": "section heading",
                      "no": "no abstract, full text or reference"}.get(basis, basis)] += n
    total = sum(by_kind.values())
    non = total - by_kind["paper"]
    return {"records": total, "non_papers": non, "share": round(non / max(total, 1), 4),
            "by_kind": dict(by_kind.most_common()), "decided_by": dict(by_basis.most_common())}


def demo_pages(corpus: Corpus) -> dict[str, object]:
    """Over every paper's default ``related`` top ten: the places non-papers held with
    ``--include-non-papers``, the pages that had one, what the default leaves out, and the
    :data:`PAGE` before and after."""
    model = DEFAULT_MODEL
    backend = choose_backend(corpus, model)
    key = vector_key(model, backend)
    embed_corpus(corpus, load_model(model, backend), key)
    build_index(corpus, key)
    service = SearchService(corpus)
    ids = [r[0] for r in corpus.connect().execute(
        "SELECT paper_id FROM papers ORDER BY paper_id").fetchall()]
    held = pages = 0
    left: Counter[str] = Counter()
    full_pages = 0
    for paper_id in ids:
        every = service.related(paper_id, HYBRID_GRAPH, K, include_non_papers=True)
        papers = service.related(paper_id, HYBRID_GRAPH, K)
        shown = {r.paper_id for r in papers}
        extra = sum(r.paper_id not in shown for r in every)
        held += extra
        pages += extra > 0
        left.update(papers.left_out)
        full_pages += len(papers) == min(K, len(ids) - 1)
    before = service.related(PAGE, HYBRID_GRAPH, K, include_non_papers=True)
    after = service.related(PAGE, HYBRID_GRAPH, K)
    kept = {r.paper_id for r in after}
    return {
        "ranker": HYBRID_GRAPH, "model": key, "k": K, "pages": len(ids),
        "pages_with_non_papers": pages, "places_held_by_non_papers": held,
        "left_out_by_kind": dict(left.most_common()),
        "pages_still_full": full_pages,
        "page": PAGE,
        "page_non_papers_before": [
            {"rank": i, "title": r.title, "relevance": r.relevance}
            for i, r in enumerate(before, 1) if r.paper_id not in kept],
        "page_left_out": after.left_out,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    args = parser.parse_args()
    load = os.getloadavg()[0]
    started = time.perf_counter()
    found: dict[str, object] = {}
    sizes: dict[str, object] = {}
    pages: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="non-papers-") as tmp:
        for name, inputs in corpora(args.data).items():
            out = Path(tmp) / name
            ingest(inputs, out)
            corpus = Corpus(out)
            found[name] = kinds(corpus)
            sizes[name] = {"inputs": [str(p) for p in inputs],
                           "records": found[name]["records"]}  # type: ignore[index]
            print(name, found[name], flush=True)
            if name == "demo":
                pages = demo_pages(corpus)
                print("demo related", pages, flush=True)
    demo = found["demo"]
    headline = (f"{pages['places_held_by_non_papers']} of the demo's "
                f"{pages['pages'] * K:,} related places would go to non-papers, which openmsd "
                "leaves out "
                f"({demo['non_papers']} of {demo['records']} records)")  # type: ignore[index]
    means = ("On the demo corpus, the places in every paper's default related top ten "
             f"({HYBRID_GRAPH}, {K} a page) that records that are not papers (errata, "
             "editorials, a book review) hold with --include-non-papers; by default they are "
             "left out and every page still shows ten papers. The corpora's non-papers by "
             "kind are below.")
    path = write_record("non_papers", {"headline": headline, "headline_means": means,
                                       "peer": "the same pages with --include-non-papers",
                                       "corpora": found, "demo_related": pages,
                                       "wall_s": round(time.perf_counter() - started, 1)},
                        data=sizes, load_before=load,
                        notes="Kinds from the source's type, the title, the section heading, "
                              "and records with no abstract, full text or reference (stub).")
    print(path)


if __name__ == "__main__":
    main()
