"""Language identification accuracy on TALN and on the SciELO articles, by identifier.

CLD3 alone (openmsd's identifier before), fastText ``lite`` alone, the two combined
(:class:`openmsd.corpus.langid.Combined`), and combined with each paper's journal as its group
(the default at ingest: the venue prior of :func:`openmsd.corpus.langid.identify`). The SciELO
monolingual titles are split in two: the biological ones, on which ``PRIOR_WEIGHT`` was chosen,
and the health ones, held out. Prints the Markdown table of ``docs/langid.md`` and each error
of the default.

    python benchmarks/langid_accuracy.py [SHARED_DATA]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from record import write_record

from openmsd.corpus import CLD3, Combined, FastText
from openmsd.eval import accuracy, bioc_rows, scielo_rows, taln_rows


def main(shared: Path) -> None:
    titles = shared / "scielo-monolingual"
    data = {"TALN (fr / en)": list(taln_rows(shared / "taln" / "papers.jsonl")),
            "SciELO JATS (declared pt / en / es, hidden)":
                list(scielo_rows(shared / "scielo-jats")),
            **{f"SciELO {part} titles (es / pt{', dev' if part == 'biological' else ''})":
               [r for language in ("es", "pt") for r in
                bioc_rows(titles / f"{language}-{part}.xml")]
               for part in ("biological", "health")}}
    combined = Combined(CLD3(), FastText())
    identifiers = {"CLD3": (CLD3(), False), "fastText lite": (FastText(), False),
                   "CLD3 + fastText": (combined, False),
                   "+ journal prior (default)": (combined, True)}
    print("| data | papers | " + " | ".join(identifiers) + " |")
    print("|---|---:|" + "---:|" * len(identifiers))
    errors = {}
    load_before = os.getloadavg()[0]
    table: dict[str, dict[str, dict]] = {}
    for name, rows in data.items():
        cells = []
        for label, (identifier, groups) in identifiers.items():
            started = time.perf_counter()
            result = accuracy(rows, identifier, groups)
            table.setdefault(name, {})[label] = {
                "accuracy": result["accuracy"], "correct": result["correct"],
                "papers": result["papers"], "seconds": round(time.perf_counter() - started, 1)}
            cells.append(f"{result['accuracy']:.2%} ({result['correct']}/{result['papers']}, "
                         f"{time.perf_counter() - started:.1f} s)")
            errors[name] = result["errors"]
        print(f"| {name} | {len(rows)} | " + " | ".join(cells) + " |")
    for name, wrong in errors.items():
        print(f"\n{name}: errors of the combined identifier")
        for paper_id, truth, found in wrong:
            print(f"- {paper_id}: {truth} -> {found}")
    taln = table["TALN (fr / en)"]["+ journal prior (default)"]
    write_record(
        "langid_accuracy",
        {"headline": f"{taln['accuracy']:.2%}".replace("%", " %"),
         "headline_means": "TALN papers whose language the default identifier finds "
                           "(declared language hidden)",
         "peer": "CLD3 alone", "by_data": table},
        data={name: len(rows) for name, rows in data.items()} | {"source": str(shared)},
        load_before=load_before,
        notes="Accuracy, not speed. The SciELO biological titles chose PRIOR_WEIGHT (dev); "
              "the health titles are held out. TALN was read by earlier runs of this script "
              "(no setting is tuned on it).")


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else root.parent / "shared" / "data")
