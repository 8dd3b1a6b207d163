"""The problem report: every problem met while reading an input, with where it was and why.

It is the ground floor's: the readers fill it, and the corpus build, the evaluations and the
robustness suite, which read files of their own, report into it the same way. Readers call
``report.problem(file, where, reason)`` for a record they cannot take whole and
``report.count(name)`` for everything worth a number. In strict mode the first problem raises
:class:`IngestError`; otherwise problems are counted by reason and all of them are kept for the
report file written beside the corpus.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["IngestError", "Problem", "Report"]


class IngestError(ValueError):
    """A problem in the input, raised in strict mode or when nothing can be read at all."""


@dataclass(frozen=True)
class Problem:
    """One problem: the file, where in it (``line 12``, ``element ref[@id='B3']``), and why."""

    file: str
    where: str
    reason: str
    kind: str = "skipped"  # "skipped": the record was not taken; "warning": taken, with a defect

    def __str__(self) -> str:
        return f"{self.file}: {self.where}: {self.reason}"

    def as_dict(self) -> dict[str, str]:
        return {"file": self.file, "where": self.where, "reason": self.reason, "kind": self.kind}


@dataclass
class Report:
    """Counts and problems of one ingest run."""

    strict: bool = False
    problems: list[Problem] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)

    def problem(self, file: str | Path, where: str, reason: str, kind: str = "skipped") -> None:
        """Record a problem; raise it at once in strict mode."""
        found = Problem(str(file), where, reason, kind)
        if self.strict:
            raise IngestError(str(found))
        self.problems.append(found)
        self.counts[f"problems.{kind}"] += 1

    def count(self, name: str, n: int = 1) -> None:
        self.counts[name] += n

    def by_reason(self) -> Counter[str]:
        """Problems counted by their reason with record-specific details cut off after ':'."""
        return Counter(p.reason.split(":", 1)[0] for p in self.problems)

    def summary(self) -> dict[str, Any]:
        return {
            "counts": dict(sorted(self.counts.items())),
            "problems": len(self.problems),
            "problems_by_reason": dict(self.by_reason().most_common()),
        }
