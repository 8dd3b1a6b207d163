"""The papers the robustness suite runs on: titles and abstracts from any input ``openmsd
ingest`` reads (generic JSONL, S2ORC, unarXive, OpenAlex, ...), in one language when asked.

With ``language="en"`` a paper contributes its own title and abstract when they are English
(CLD3, else the declared language) and its English translation otherwise (TALN's
``translations.en``); papers with neither are skipped and counted. Papers without a title or an
abstract are skipped and counted too, as are ids seen twice; problems in the input (malformed
lines) are counted by the ingest report with their file and line.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from openmsd.corpus import identify, paper_text
from openmsd.ingest import detect
from openmsd.report import IngestError, Report

COLUMNS = ["paper_id", "title", "abstract", "language", "source"]
"""``source``: the input file the paper was read from, as given."""


@dataclass
class Loaded:
    """The papers kept (a table with :data:`COLUMNS`), the skipped ones counted by reason, and
    the ingest report of the inputs."""

    papers: pd.DataFrame
    skipped: Counter[str] = field(default_factory=Counter)
    report: Report = field(default_factory=Report)

    def summary(self) -> dict[str, Any]:
        return {"papers": len(self.papers), "skipped": dict(sorted(self.skipped.items())),
                "input_problems": self.report.summary()["problems_by_reason"]}


def _read(paths: Iterable[Path], report: Report) -> list[tuple[Path, dict[str, Any]]]:
    """(input file, paper record) of every paper of ``paths``."""
    papers = []
    for path in paths:
        if not path.is_file():
            raise IngestError(f"{path}: no such file")
        reader = detect(path)
        if reader is None:
            raise IngestError(f"{path}: not a format openmsd reads (see 'openmsd formats')")
        papers.extend((path, record) for kind, record in reader.read(path, report)
                      if kind == "paper")
    return papers


def _version(paper: dict[str, Any], own_language: str | None,
             language: str | None) -> tuple[str | None, str | None, str | None] | None:
    """(title, abstract, language) in the language asked for; None when there is none."""
    if language is None or own_language == language:
        return paper.get("title"), paper.get("abstract"), own_language
    for translation in paper.get("translations") or []:
        if translation.get("language") == language:
            return translation.get("title"), translation.get("abstract"), language
    return None


def load_papers(paths: Sequence[str | Path], language: str | None = "en") -> Loaded:
    """Every paper of ``paths`` with a title and an abstract (in ``language`` when given)."""
    report = Report()
    read = _read([Path(p) for p in paths], report)
    detected = identify([paper_text(r.get("title"), r.get("abstract")) for _, r in read],
                        [r.get("declared_language") for _, r in read])
    rows, skipped, seen = [], Counter(), set()
    for (source, record), (own_language, _) in zip(read, detected, strict=True):
        version = _version(record, own_language, language)
        if version is None:
            skipped[f"no text in {language}"] += 1
            continue
        title, abstract, lang = ((v or "").strip() if i < 2 else v for i, v in enumerate(version))
        if not title:
            skipped["no title"] += 1
        elif not abstract:
            skipped["no abstract"] += 1
        elif record["key"] in seen:
            skipped["duplicate id"] += 1
        else:
            seen.add(record["key"])
            rows.append((record["key"], title, abstract, lang, str(source)))
    if not rows:
        raise IngestError(f"{', '.join(map(str, paths))}: no paper with a title and an abstract"
                          + (f" in {language!r}" if language else "")
                          + f" (skipped: {dict(skipped)})")
    return Loaded(pd.DataFrame(rows, columns=COLUMNS), skipped, report)


def sample(papers: pd.DataFrame, n: int | None, seed: int = 0) -> pd.DataFrame:
    """A seeded sample of ``n`` papers (all of them when ``n`` is None or not smaller), in
    input order."""
    if n is None or n >= len(papers):
        return papers.reset_index(drop=True)
    if n < 1:
        raise ValueError(f"sample size must be positive, got {n}")
    chosen = np.sort(np.random.default_rng(seed).choice(len(papers), size=n, replace=False))
    return papers.iloc[chosen].reset_index(drop=True)
