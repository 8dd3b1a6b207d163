"""Where a pipeline stage runs: one engine parameter for ``ingest`` and ``embed``.

* ``local`` (also spelled ``duckdb``): this process; DuckDB builds the corpus, the encoders
  run here, with progress;
* ``spark``: a SparkSession (local mode, or a cluster under ``spark-submit``; see
  ``docs/scale.md``): one task per input file, ``mapInPandas`` over the papers' partitions.

``relations`` runs its Ibis expressions on either (:func:`openmsd.relations.connect`). A
command asks :func:`engine` for one by name and calls it; it never branches on the name.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from openmsd.corpus import Corpus, corpus_lock
from openmsd.ingest import IngestResult, ingest, ingest_on_spark

__all__ = ["ENGINES", "Embedded", "Engine", "EngineError", "engine"]

Progress = Callable[[str, int | None], Callable[[int], None]] | None
"""``progress(label, total)``: a callback advanced by the items done (rich bars in the CLI)."""


class EngineError(ValueError):
    """An engine asked for what it does not do, in one line."""


@dataclass(frozen=True)
class Embedded:
    """What an ``embed`` run did (its result's fields) and the line that says it."""

    fields: dict[str, Any]
    line: str


class Engine(Protocol):
    """Runs ``ingest`` and ``embed``."""

    name: str

    def ingest(self, inputs: list[str], out: str, fmt: str | None, strict: bool,
               since: str | None, progress: Progress) -> IngestResult:
        """``inputs`` (paths; on Spark URIs too) into the corpus at ``out``, incrementally."""
        ...

    def embed(self, corpus: Corpus, model: str, backend: str, stored_as: str,
              batch_size: int, paper_ids: Collection[str] | None, enriched: bool,
              progress: Progress) -> Embedded:
        """Vectors of every paper (or of ``paper_ids``) without one yet, stored as
        ``stored_as``."""
        ...


class Local:
    """This process: DuckDB, and the encoders here."""

    name = "local"

    def ingest(self, inputs: list[str], out: str, fmt: str | None, strict: bool,
               since: str | None, progress: Progress) -> IngestResult:
        return ingest([Path(i) for i in inputs], Path(out), fmt, strict, progress=progress,
                      since=since)

    def embed(self, corpus: Corpus, model: str, backend: str, stored_as: str,
              batch_size: int, paper_ids: Collection[str] | None, enriched: bool,
              progress: Progress) -> Embedded:
        from openmsd.models import embed_corpus, load_model  # lazy: loads scipy (~0.2 s)

        corpus.check()
        encoder = load_model(model, backend)  # weights load once the corpus checked out
        total = corpus.check()["build"]["counts"]["papers"]
        advance = progress(f"embedding with {stored_as}",
                           len(paper_ids) if paper_ids is not None else total) \
            if progress is not None else None
        done = embed_corpus(corpus, encoder, stored_as, batch_size, advance,
                            paper_ids=paper_ids)
        return Embedded(asdict(done), (
            f"{stored_as}: {done.embedded:,} papers embedded, {done.cached:,} already were, "
            f"{done.no_text:,} without title or abstract -> {done.directory}"))


class Spark:
    """A SparkSession: the active one, else a local one on every core."""

    name = "spark"

    def ingest(self, inputs: list[str], out: str, fmt: str | None, strict: bool,
               since: str | None, progress: Progress) -> IngestResult:
        return ingest_on_spark(inputs, out, fmt, strict, since=since)

    def embed(self, corpus: Corpus, model: str, backend: str, stored_as: str,
              batch_size: int, paper_ids: Collection[str] | None, enriched: bool,
              progress: Progress) -> Embedded:
        from openmsd.models import embed_on_spark  # lazy: loads scipy (~0.2 s)

        if enriched or paper_ids is not None:
            raise EngineError("--engine spark embeds whole corpora: --enrich and --split run "
                              "locally")
        with corpus_lock(corpus.root, create=False):
            done = embed_on_spark(str(corpus.table_path("papers")),
                                  str(corpus.layout.vectors), model, backend,
                                  batch_size=batch_size)
        return Embedded(asdict(done), (
            f"{done.model}: {done.embedded:,} papers embedded in {done.parts:,} partitions, "
            f"{done.cached:,} already were, {done.no_text:,} without title or abstract -> "
            f"{done.directory}"))


#: The engines by name (``duckdb``: the local engine, as ``ingest`` has always called it).
ENGINES: dict[str, Engine] = {"local": Local(), "duckdb": Local(), "spark": Spark()}


def engine(name: str) -> Engine:
    """The engine called ``name``; :class:`EngineError` listing the names otherwise.

    >>> engine("duckdb").name, engine("spark").name
    ('local', 'spark')
    """
    found = ENGINES.get(name)
    if found is None:
        raise EngineError(f"--engine {name!r}: expected local (or duckdb) or spark")
    return found
