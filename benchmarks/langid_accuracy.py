"""Language identification accuracy on TALN and on the SciELO articles, by identifier.

CLD3 alone (openmsd's identifier before), fastText ``lite`` alone, and the two combined (the
default, :class:`openmsd.corpus.langid.Combined`). Prints the Markdown table of
``docs/langid.md`` and each error of the combined identifier.

    python benchmarks/langid_accuracy.py [SHARED_DATA]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from openmsd.corpus.langid import CLD3, Combined, FastText
from openmsd.eval.langid import accuracy, scielo_rows, taln_rows


def main(shared: Path) -> None:
    data = {"TALN (fr / en)": list(taln_rows(shared / "taln" / "papers.jsonl")),
            "SciELO (declared pt / en / es, hidden)": list(scielo_rows(shared / "scielo-jats"))}
    identifiers = {"CLD3": CLD3(), "fastText lite": FastText(), "CLD3 + fastText (default)":
                   Combined()}
    print("| data | papers | " + " | ".join(identifiers) + " |")
    print("|---|---:|" + "---:|" * len(identifiers))
    errors = {}
    for name, rows in data.items():
        cells = []
        for identifier in identifiers.values():
            started = time.perf_counter()
            result = accuracy(rows, identifier)
            cells.append(f"{result['accuracy']:.2%} ({result['correct']}/{result['papers']}, "
                         f"{time.perf_counter() - started:.1f} s)")
            errors[name] = result["errors"]
        print(f"| {name} | {len(rows)} | " + " | ".join(cells) + " |")
    for name, wrong in errors.items():
        print(f"\n{name}: errors of the combined identifier")
        for paper_id, truth, found in wrong:
            print(f"- {paper_id}: {truth} -> {found}")


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else root.parent / "shared" / "data")
