"""The works ``openmsd fetch openalex`` gains by asking for OpenAlex's works outside its core
(``include_xpac=true``, the default; ``--core-only`` leaves them out), and the share of those
not in English, measured on the loopback OpenAlex server of the tests.

The server (``tests/fetch/apiserver.py``) answers as the API documents it and leaves works
flagged ``is_xpac`` out of its lists unless ``include_xpac=true`` is asked. It serves real
records from ``../shared/data``, as OpenAlex works: the TALN papers (French and English), the
SciELO JATS articles (Portuguese, Spanish, English), the SciELO BioC documents that have an
abstract (Spanish, Portuguese), the S2ORC sample and the unArXive sample (English). A seeded
share of them (``--xpac-share``, by default 0.41: OpenAlex counts about 278 million works
without the expansion pack and over 470 million with it, docs.openalex.org "XPAC") is flagged
``is_xpac``, each with a repository type (dissertation, preprint or dataset). The works are
served without a ``language``, so the language is openmsd's own identification at ingest.

Each fetch runs as a user runs it (a new process): ``openmsd fetch openalex --filter
publication_year:1000-2100`` with and without ``--core-only``, then ``openmsd ingest`` of each.
The works gained are the corpus papers the first has and the second has not; their languages
are the corpus's ``language`` column. This is a loopback measurement of these records with
this flagging, not OpenAlex's real share.

    python benchmarks/xpac_share.py --record xpac_share
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from record import write_record  # noqa: E402

from openmsd.corpus import Corpus  # noqa: E402
from openmsd.ingest import get_reader  # noqa: E402
from openmsd.report import Report  # noqa: E402
from tests.fetch.apiserver import OPENALEX_KEY, World, openalex_work, serve  # noqa: E402

XPAC_SHARE = round((470 - 278) / 470, 2)
"""The share of OpenAlex's works that are in the expansion pack (docs.openalex.org, "XPAC":
about 278 million works without it, over 470 million with it)."""
REPOSITORY_TYPES = ("dissertation", "preprint", "dataset")
SOURCES = {  # name: (reader, files under the data folder)
    "taln": ("jsonl", ["taln/papers.jsonl"]),
    "scielo-jats": ("jats", ["scielo-jats/*.xml"]),
    "s2orc": ("s2orc", ["s2orc-sample/metadata_sample.jsonl"]),
    "unarxive": ("unarxive", ["unarxive-sample/*.jsonl"]),
}


def bioc_records(folder: Path) -> list[dict[str, Any]]:
    """The SciELO BioC documents with a title and an abstract: ``{title, abstract}``."""
    out = []
    for path in sorted(folder.glob("*.xml")):
        for document in ET.parse(path).getroot().iter("document"):
            text: dict[str, str] = {}
            for passage in document.iter("passage"):
                section = next((i.text for i in passage.iter("infon")
                                if i.get("key") == "section"), None)
                words = " ".join(t.text or "" for t in passage.iter("text")).strip()
                if section in ("title", "abstract") and words:
                    text[section] = (text.get(section, "") + " " + words).strip()
            if text.get("title") and text.get("abstract"):
                out.append({"title": text["title"], "abstract": text["abstract"],
                            "year": None, "authors": [], "venue": path.stem})
    return out


def real_records(data: Path) -> dict[str, list[dict[str, Any]]]:
    """The records of each source with a title: ``{title, abstract, year, authors, venue}``."""
    found: dict[str, list[dict[str, Any]]] = {}
    for name, (fmt, patterns) in SOURCES.items():
        reader, rows = get_reader(fmt), []
        for pattern in patterns:
            for path in sorted(data.glob(pattern)):
                for kind, record in reader.read(path, Report()):
                    if kind == "paper" and record.get("title"):
                        rows.append(record)
        found[name] = rows
    found["scielo-bioc"] = bioc_records(data / "scielo-monolingual")
    return found


def world_of(records: dict[str, list[dict[str, Any]]], share: float, seed: int
             ) -> tuple[World, Counter]:
    """A server world of every record as a work, ``share`` of them (seeded) flagged
    ``is_xpac`` with a repository type; the flagged ones counted by source and type."""
    rng = random.Random(seed)
    rows = [(source, row) for source, items in records.items() for row in items]
    flagged = set(rng.sample(range(len(rows)), round(share * len(rows))))
    world, counts = World(), Counter()
    world.keys = {OPENALEX_KEY: 1.0}
    for index, (source, row) in enumerate(rows):
        xpac = index in flagged
        kind = rng.choice(REPOSITORY_TYPES) if xpac else "article"
        if xpac:
            counts[f"{source}:{kind}"] += 1
        year = row.get("year") if isinstance(row.get("year"), int) else 2015
        world.add(openalex_work(100_000 + index, row["title"], row.get("abstract"), year,
                                None, list(row.get("authors") or [])[:5], [],
                                row.get("venue"), work_type=kind, xpac=xpac))
    return world, counts


def openmsd(*args: str | Path) -> str:
    """``python -m openmsd ARGS`` in a new process from the repository root; its stdout."""
    done = subprocess.run([sys.executable, "-m", "openmsd", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
    if done.returncode:
        raise SystemExit(f"openmsd {' '.join(map(str, args))} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def fetch_and_ingest(url: str, folder: Path, core_only: bool) -> dict[str, Any]:
    """One fetch (``--core-only`` or not) and its ingest: the papers by id, the fetch report,
    the seconds."""
    name = "core" if core_only else "all"
    works = folder / f"{name}.jsonl.gz"
    began = time.perf_counter()
    openmsd("fetch", "openalex", "--filter", "publication_year:1000-2100", "--api-url", url,
            "--api-key", OPENALEX_KEY, "--max-works", "100000", "--out", works,
            *(["--core-only"] if core_only else []))
    fetched = time.perf_counter() - began
    openmsd("ingest", works, "--out", folder / f"corpus-{name}")
    report = json.loads(works.with_name(works.name + ".fetch.json").read_text())["report"]
    papers = {row["paper_id"]: row for row in Corpus(folder / f"corpus-{name}").read(
        "papers").select(["paper_id", "language", "doc_type"]).to_pylist()}
    return {"papers": papers, "report": report, "fetch_seconds": round(fetched, 1),
            "seconds": round(time.perf_counter() - began, 1)}


def share(rows: list[dict[str, Any]], test) -> float:
    return round(sum(map(test, rows)) / len(rows), 3) if rows else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get(
        "OPENMSD_SHARED_DATA", ROOT.parent / "shared" / "data")))
    parser.add_argument("--xpac-share", type=float, default=XPAC_SHARE)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--record", default=None, help="write benchmarks/results/NAME.json")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    records = real_records(args.data)
    world, flagged = world_of(records, args.xpac_share, args.seed)
    runs = {}
    with tempfile.TemporaryDirectory(prefix="openmsd-xpac-") as tmp:
        server = serve(world)
        api = next(server)
        try:
            for core_only in (True, False):
                runs[core_only] = fetch_and_ingest(api.openalex, Path(tmp), core_only)
        finally:
            server.close()
    core, everything = runs[True], runs[False]
    gained = [row for key, row in everything["papers"].items() if key not in core["papers"]]
    core_rows = list(core["papers"].values())

    def not_english(row: dict[str, Any]) -> bool:
        return row["language"] not in ("en", "und", None)

    languages = Counter(row["language"] for row in gained)
    numbers = {
        "works_core_only": core["report"]["works"],
        "works_with_xpac": everything["report"]["works"],
        "works_gained": everything["report"]["works"] - core["report"]["works"],
        "xpac_works_reported": everything["report"]["xpac_works"],
        "papers_core_only": len(core["papers"]),
        "papers_with_xpac": len(everything["papers"]),
        "papers_gained": len(gained),
        "gained_share_not_english": share(gained, not_english),
        "gained_share_undetermined": share(gained, lambda r: r["language"] in ("und", None)),
        "core_share_not_english": share(core_rows, not_english),
        "gained_languages": dict(languages.most_common()),
        "gained_doc_types": dict(Counter(row["doc_type"] for row in gained).most_common()),
        "seconds": {"core_only": core["seconds"], "with_xpac": everything["seconds"]},
    }
    gain = numbers["papers_gained"] / numbers["papers_core_only"]
    numbers["gain_over_core"] = round(gain, 3)
    numbers["headline"] = (f"+{numbers['works_gained']:,} works with xpac "
                           f"(+{gain:.0%} over --core-only), "
                           f"{numbers['gained_share_not_english']:.0%} of them not in English")
    numbers["headline_means"] = (
        "works gained by fetching with include_xpac (the default) rather than --core-only, "
        "and the share of them openmsd's language identification finds not in English; on "
        "the loopback OpenAlex server, real records with a seeded share flagged is_xpac: "
        "not OpenAlex's real share")
    numbers["peer"] = "the same fetch with --core-only"
    data = {"works_served": len(world.works), "xpac_flagged": sum(flagged.values()),
            "xpac_share": args.xpac_share, "seed": args.seed,
            "records_by_source": {k: len(v) for k, v in records.items()},
            "xpac_by_source_and_type": dict(sorted(flagged.items()))}
    print(json.dumps({"numbers": numbers, "data": data}, indent=1, ensure_ascii=False))
    if args.record:
        path = write_record(args.record, numbers, data=data, load_before=load_before,
                            notes="loopback OpenAlex server (tests/fetch/apiserver.py) serving "
                                  "real records from ../shared/data as works, a seeded share "
                                  "flagged is_xpac with a repository type; languages from "
                                  "openmsd's identification at ingest (served without one)")
        print(f"record: {path}")


if __name__ == "__main__":
    main()
