"""``openmsd enrich CORPUS --method M --length N``: English summaries for the non-English
papers of a corpus, stored per paper, method and length (:mod:`openmsd.corpus.summaries`).

English papers are left alone; papers of unknown language are counted and left alone; a
paper already summarised from its current text is not done again (a rerun only does what
is missing, failures included). Work goes in batches; each batch's summaries are written
atomically as soon as it is done. ``dry_run`` only counts what a run would do.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from openmsd.corpus import (
    LENGTHS,
    Corpus,
    current_summaries,
    read_papers,
    summaries_dir,
    write_summaries,
)
from openmsd.enrich.generator import Generator
from openmsd.enrich.methods import MARGIN, METHODS
from openmsd.enrich.tokens import SummaryTokenizer
from openmsd.io import write_json


class EnrichError(ValueError):
    """A run that cannot start: unknown method or length, a method without its backend."""


@dataclass
class EnrichResult:
    """What a run did (or, with ``dry_run``, would do). ``to_do``: papers not English, not
    cached; ``input_tokens`` / ``max_generated_tokens``: what the backend reads and may
    write for them; ``papers_per_s`` / ``tokens_per_s``: the backend's throughput."""

    method: str
    length: int
    backend: str | None
    enriched: int = 0
    cached: int = 0
    skipped_english: int = 0
    failed: int = 0
    no_abstract: int = 0
    unknown_language: int = 0
    to_do: int = 0
    dry_run: bool = False
    input_tokens: int = 0
    max_generated_tokens: int = 0
    generated_tokens: int = 0
    seconds: float = 0.0
    papers_per_s: float | None = None
    tokens_per_s: float | None = None
    failed_reasons: dict[str, int] = field(default_factory=dict)
    failures: list[dict[str, str]] = field(default_factory=list)
    directory: str = ""

    def summary(self) -> dict[str, Any]:
        """The counts (everything but the failure list)."""
        return {k: v for k, v in asdict(self).items() if k != "failures"}


def _plan(papers: pa.Table, method: str, length: int, tokenizer: SummaryTokenizer
          ) -> tuple[int, int]:
    """Input tokens and the most generated tokens ``method`` needs for ``papers``."""
    if method == "author" or papers.num_rows == 0:
        return 0, 0
    abstracts = papers["abstract"].to_pylist()
    if method == "topn":
        need = [a for a, en in zip(abstracts, papers["en_abstract"].to_pylist(), strict=True)
                if a and not en]
        return sum(min(tokenizer.count(a), length) for a in need), 2 * length * len(need)
    asked = [a for a in abstracts if a and a.strip()]
    return sum(tokenizer.count(a) for a in asked), (length + MARGIN) * len(asked)


def enrich(corpus: Corpus, method: str, length: int, generator: Generator | None = None,
           paper_ids: Collection[str] | None = None, batch_size: int = 8,
           dry_run: bool = False, attempts: int = 2,
           progress: Callable[[int], None] | None = None,
           tokenizer: SummaryTokenizer | None = None) -> EnrichResult:
    """Summarise the non-English papers of ``corpus`` (or of ``paper_ids``) with ``method``
    (``author``, ``topn``, ``llm``) at ``length`` tokens, ``generator`` writing what the
    source does not carry. Counts in the result; the summaries and ``report.json`` under
    ``CORPUS/summaries/<method><length>/``."""
    if method not in METHODS:
        raise EnrichError(f"unknown method {method!r}: one of {', '.join(METHODS)}")
    if length not in LENGTHS:
        raise EnrichError(f"length must be one of {', '.join(map(str, LENGTHS))}, not {length}")
    if method == "llm" and generator is None and not dry_run:
        raise EnrichError("--method llm needs a generator backend (gemma or an endpoint URL)")
    tokenizer = tokenizer or SummaryTokenizer()
    result = EnrichResult(method, length, generator.name if generator else None,
                          dry_run=dry_run,
                          directory=str(summaries_dir(corpus, method, length)))
    papers = read_papers(corpus, paper_ids)
    language = papers["language"]
    result.skipped_english = int(pc.sum(pc.equal(language, "en")).as_py() or 0)
    result.unknown_language = int(pc.sum(pc.is_null(language)).as_py() or 0)
    candidates = papers.filter(pc.fill_null(pc.not_equal(language, "en"), False))
    done = current_summaries(corpus, method, length, papers)
    cached = pc.is_in(candidates["paper_id"], pa.array(list(done), pa.string()))
    result.cached = int(pc.sum(cached).as_py() or 0)
    todo = candidates.filter(pc.invert(cached))
    result.to_do = todo.num_rows
    result.input_tokens, result.max_generated_tokens = _plan(todo, method, length, tokenizer)
    if dry_run:
        return result
    run = METHODS[method]
    reasons: Counter[str] = Counter()
    started = time.perf_counter()
    for start in range(0, todo.num_rows, batch_size):
        batch = todo.slice(start, batch_size)
        outcomes = run(batch, length, tokenizer, generator, attempts)
        rows = []
        for paper_id, digest, outcome in zip(batch["paper_id"].to_pylist(),
                                             batch["source_hash"].to_pylist(), outcomes,
                                             strict=True):
            result.generated_tokens += outcome.generated_tokens
            if outcome.status == "ok":
                rows.append({"paper_id": paper_id, "source_hash": digest,
                             "summary": outcome.summary, "source": outcome.source,
                             "tokens": tokenizer.count(outcome.summary or ""),
                             "generated_tokens": outcome.generated_tokens})
                continue
            if outcome.status == "no_abstract":
                result.no_abstract += 1
            else:
                result.failed += 1
                reasons[outcome.reason or "unknown"] += 1
            result.failures.append({"paper_id": paper_id, "status": outcome.status,
                                    "reason": outcome.reason or ""})
        write_summaries(corpus, method, length, rows)
        result.enriched += len(rows)
        if progress:
            progress(batch.num_rows)
    result.seconds = round(time.perf_counter() - started, 3)
    if result.seconds > 0 and todo.num_rows:
        result.papers_per_s = round(todo.num_rows / result.seconds, 4)
        result.tokens_per_s = round(result.generated_tokens / result.seconds, 2)
    result.failed_reasons = dict(reasons.most_common())
    write_json(summaries_dir(corpus, method, length) / "report.json", asdict(result))
    return result
