"""``openmsd ingest``: read inputs with their readers (:mod:`openmsd.ingest.inputs`), stage
them, and rebuild the corpus.

Each input (a file or a folder) becomes one staged part of the corpus, keyed by the digest of
its content: ingesting an unchanged input again does nothing, a changed one replaces its part
in place (keeping its position in the merge order), a new one is appended. The corpus tables
are then rebuilt from all parts (:func:`openmsd.corpus.build.build_corpus`), and the report of
every part plus the build is written beside the corpus.

One ingest or index build at a time writes a corpus: :func:`openmsd.corpus.corpus_lock`
takes ``CORPUS/.ingest.lock`` and a second run fails at once with a clear error. A run killed at any
point leaves the old corpus or the new one readable (see
:meth:`openmsd.corpus.store.Corpus.manifest`); what it left behind (staged parts no manifest
names, ``.build-*`` folders) is removed by the next run.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import itertools
import multiprocessing
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pyarrow as pa

from openmsd.corpus import (
    NEXT,
    PROBLEMS,
    SCHEMA_VERSION,
    STAGED,
    Corpus,
    LanguageIdentifier,
    build_corpus,
    corpus_lock,
    staged_subdir,
)
from openmsd.crashpoint import crash_point
from openmsd.ingest.formats import get_reader
from openmsd.ingest.inputs import input_records, list_files
from openmsd.ingest.snapshot import deleted_works, find_snapshot
from openmsd.io import ParquetSink, replace_dir, temp_dir_beside, write_json, write_jsonl
from openmsd.memory import memory_limit
from openmsd.orphans import die_with_parent
from openmsd.phases import Phases
from openmsd.report import IngestError, Problem, Report

__all__ = ["IngestResult", "StagedWriter", "digest", "ingest", "stage"]

STAGE_VERSION = 2  # bump when a reader's output changes, so staged parts are re-read
FLUSH_ROWS = 20_000
PROGRESS_EVERY = 1_000
PARALLEL_BYTES = 64 << 20
"""An input of several files holding more than this (on disk) has them read in parallel."""


def digest(files: list[Path], root: Path, fmt: str | None) -> str:
    """A content digest of an input: its files' relative names and bytes, and the format asked."""
    h = hashlib.sha256(f"stage={STAGE_VERSION};schema={SCHEMA_VERSION};format={fmt}".encode())
    for file in files:
        h.update(str(file.relative_to(root) if file != root else file.name).encode() + b"\0")
        with open(file, "rb") as handle:
            while chunk := handle.read(1 << 20):
                h.update(chunk)
    return h.hexdigest()[:16]


class StagedWriter:
    """Buffers records by kind and writes them to the staged Parquet files of one part.

    Records are buffered as rows; ``references`` blocks as columns (no dict per reference).
    Each full buffer becomes an Arrow table here; its Parquet encoding and compression run on
    one background thread (they release the GIL) while the next records are read. One write
    is in flight at a time, so memory stays bounded, and its error is raised by the next
    :meth:`add` that flushes, or by :meth:`close`."""

    def __init__(self, directory: Path):
        directory.mkdir(parents=True, exist_ok=True)
        self.sinks = {kind: ParquetSink(directory / f"staged_{kind}s.parquet", schema)
                      for kind, schema in STAGED.items()}
        self.buffers: dict[str, list[dict[str, Any]]] = {kind: [] for kind in STAGED}
        self.blocks = _Blocks(STAGED["reference"])
        self.seq = 0
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="openmsd-stage")
        self._pending: Future[None] | None = None

    def add(self, kind: str, record: dict[str, Any]) -> None:
        if kind == "references":
            self.seq = self.blocks.add(record, self.seq)
            if self.blocks.rows >= FLUSH_ROWS:
                self._flush("reference")
            return
        record["seq"] = self.seq
        self.seq += 1
        buffer = self.buffers[kind]
        buffer.append(record)
        if len(buffer) >= FLUSH_ROWS:
            self._flush(kind)

    def _flush(self, kind: str) -> None:
        rows, self.buffers[kind] = self.buffers[kind], []
        if rows:
            self._submit(kind, pa.Table.from_pylist(rows, schema=self.sinks[kind].schema))
        if kind == "reference" and self.blocks.rows:
            self._submit(kind, self.blocks.table())

    def _submit(self, kind: str, table: pa.Table) -> None:
        self._wait()
        self._pending = self._pool.submit(self.sinks[kind].write, table)

    def _wait(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def close(self) -> dict[str, int]:
        for kind in STAGED:
            self._flush(kind)
        self._wait()
        self._pool.shutdown()
        for sink in self.sinks.values():
            sink.close()
        return {f"{kind}s": sink.rows for kind, sink in self.sinks.items()}

    def abort(self) -> None:
        with contextlib.suppress(Exception):
            self._wait()
        self._pool.shutdown()
        for sink in self.sinks.values():
            sink.abort()


class _Blocks:
    """``references`` blocks gathered as they come and turned into one table of the staged
    references' schema, column by column (no dict, no Python object per reference)."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.blocks: list[dict[str, Any]] = []
        self.seqs: list[int] = []
        self.rows = 0

    def add(self, block: dict[str, Any], seq: int) -> int:
        """Take ``block``'s references, numbered from ``seq``; the next free ``seq``."""
        n = len(block["position"])
        if n:
            self.blocks.append(block)
            self.seqs.append(seq)
            self.rows += n
        return seq + n

    def table(self) -> pa.Table:
        """The gathered references as one table (the blocks are let go)."""
        blocks, seqs = self.blocks, self.seqs
        sizes = np.fromiter(map(len, (b["position"] for b in blocks)), np.int64, len(blocks))
        block_of = np.repeat(np.arange(len(blocks)), sizes)
        first = np.cumsum(sizes) - sizes
        columns = {"seq": pa.array(np.asarray(seqs, np.int64)[block_of]
                                   + np.arange(self.rows) - first[block_of])}
        for column in self.schema:
            if column.name != "seq":
                values = [b.get(column.name) for b in blocks]
                columns[column.name] = _column(column, values, sizes, block_of)
        self.blocks, self.seqs, self.rows = [], [], 0
        return pa.table(columns, schema=self.schema)


def _column(field: pa.Field, values: list[Any], sizes: np.ndarray, block_of: np.ndarray
            ) -> pa.Array:
    """One staged column from each block's value: a list (one item a reference) or a value
    every reference of the block shares."""
    n = int(sizes.sum())
    lists = [type(v) is list for v in values]
    if not any(lists):
        if all(v is None for v in values):
            return pa.nulls(n, field.type)
        return pa.array(values, field.type).take(pa.array(block_of))
    if not all(lists):  # lists in some blocks, one shared value in others
        values = [v if is_list else [v] * int(size)
                  for v, is_list, size in zip(values, lists, sizes, strict=True)]
    if not np.array_equal(np.fromiter(map(len, values), np.int64, len(values)), sizes):
        raise ValueError(f"a references block's column {field.name!r} does not have one item "
                         "per position")
    items = list(itertools.chain.from_iterable(values))
    if pa.types.is_list(field.type) and all(type(item) is list for item in items):
        offsets = np.zeros(len(items) + 1, np.int32)
        np.cumsum(np.fromiter(map(len, items), np.int32, len(items)), out=offsets[1:])
        flat = pa.array(list(itertools.chain.from_iterable(items)), field.type.value_type)
        return pa.ListArray.from_arrays(pa.array(offsets), flat)
    return pa.array(items, field.type)


@contextlib.contextmanager
def _rare_gc(threshold: int = 200_000) -> Iterator[None]:
    """Collect cycles less often: readers allocate millions of short-lived acyclic dicts, and
    the default collector re-scans the write buffers every 700 of them (about a third of the
    staging time on OpenAlex works)."""
    saved = gc.get_threshold()
    gc.set_threshold(threshold, saved[1], saved[2])
    try:
        yield
    finally:
        gc.set_threshold(*saved)


def stage(path: Path, target: Path, fmt: str | None, report: Report,
          on_record: Callable[[int], None] | None = None, workers: int | None = None,
          since: str | None = None) -> dict[str, int]:
    """Read one input into a staged part directory written atomically at ``target``;
    ``on_record(n)`` is told of the records read, :data:`PROGRESS_EVERY` at a time (a file's
    at once where files are read in parallel).

    An input of several files holding more than :data:`PARALLEL_BYTES` in all has its files
    read by up to ``workers`` processes at once (default: the CPU cores), each into its own
    folder of the part (:func:`openmsd.corpus.layout.staged_subdir`); the records, their order,
    the problems and the counts are those one process gives. ``since``: the partitions of an
    OpenAlex snapshot folder updated on or after that day only."""
    files = list_files(path, since)
    workers = min(len(files), workers or os.cpu_count() or 1)
    if sum(file.stat().st_size for file in files) <= PARALLEL_BYTES:
        workers = 1
    tmp = temp_dir_beside(target)
    try:
        if workers > 1:
            counts = _stage_in_parallel(files, fmt, tmp, report, on_record, workers)
        else:
            counts, _ = _stage_files(files, fmt, tmp, report, on_record)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    write_jsonl(tmp / PROBLEMS, (p.as_dict() for p in report.problems))
    write_json(tmp / "part.json", {"counts": dict(report.counts), "records": counts})
    crash_point("ingest.staged")  # written, not yet renamed into place
    replace_dir(tmp, target)
    return counts


def _stage_files(files: list[Path], fmt: str | None, directory: Path, report: Report,
                 on_record: Callable[[int], None] | None) -> tuple[dict[str, int], int]:
    """Read ``files`` in order into the staged files of ``directory``; their counts by kind
    and the number of records read."""
    reader = get_reader(fmt) if fmt else None
    writer = StagedWriter(directory)
    read = 0
    try:
        with _rare_gc():
            for read, (kind, record) in enumerate(input_records(files, reader, report), 1):
                writer.add(kind, record)
                if on_record is not None and not read % PROGRESS_EVERY:
                    on_record(PROGRESS_EVERY)  # by the thousand: an update costs more than a record
        if on_record is not None:
            on_record(read % PROGRESS_EVERY)
        return writer.close(), read
    except BaseException:
        writer.abort()
        raise


def _stage_file(file: Path, fmt: str | None, directory: Path, strict: bool
                ) -> tuple[dict[str, int], int, list[Problem], dict[str, int]]:
    """One file staged in a process of its own: its counts by kind, the records read, and its
    problems and counts."""
    report = Report(strict=strict)
    counts, read = _stage_files([file], fmt, directory, report, None)
    crash_point("ingest.file_staged")  # a staging process killed: the run fails, cleanly
    return counts, read, report.problems, dict(report.counts)


def _stage_in_parallel(files: list[Path], fmt: str | None, tmp: Path, report: Report,
                       on_record: Callable[[int], None] | None, workers: int
                       ) -> dict[str, int]:
    """Stage each of ``files`` in a process of its own, ``workers`` at once, into a folder of
    ``tmp`` named by the ``seq`` its records start from in the whole input; problems and counts
    join ``report`` in file order."""
    context = multiprocessing.get_context("spawn")  # a fork would copy this process's threads
    folders = [tmp / f".file-{n:06d}" for n in range(len(files))]
    totals = {f"{kind}s": 0 for kind in STAGED}
    with ProcessPoolExecutor(workers, mp_context=context, initializer=die_with_parent,
                             initargs=(os.getpid(),)) as pool:
        futures = [pool.submit(_stage_file, file, fmt, folder, report.strict)
                   for file, folder in zip(files, folders, strict=True)]
        try:
            for file, folder, future in zip(files, folders, futures, strict=True):
                try:
                    counts, read, problems, counted = future.result()
                except BrokenProcessPool as error:
                    raise IngestError(f"{file}: the process staging it stopped ({error}); "
                                      "nothing was staged, run the ingest again") from None
                if sum(counts.values()):
                    folder.rename(tmp / staged_subdir(sum(totals.values())))
                else:  # nothing read: no folder, so none shares its first seq with the next
                    shutil.rmtree(folder)
                for kind, n in counts.items():
                    totals[kind] += n
                report.problems.extend(problems)
                report.counts.update(counted)
                if on_record is not None:
                    on_record(read)
                crash_point("ingest.file_collected")  # the parent killed: its workers end too
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return totals


@dataclass
class IngestResult:
    """What an ingest run did: inputs staged or unchanged, the build summary, the full report,
    and the seconds it spent per phase (``stage``: reading and staging the inputs; then the
    build's ``identify``, ``resolve references`` and ``write``)."""

    staged: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    build: dict[str, Any] = field(default_factory=dict)
    report: dict[str, Any] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=dict)


def _part_problems(part: Path) -> list[Problem]:
    path = part / PROBLEMS
    if not path.exists():
        return []
    return [Problem(**orjson.loads(line)) for line in path.read_bytes().splitlines() if line]


def ingest(inputs: Iterable[str | Path], out: str | Path, fmt: str | None = None,
           strict: bool = False, identifier: LanguageIdentifier | None = None,
           progress: Callable[[str, int | None], Callable[[int], None]] | None = None,
           since: str | None = None) -> IngestResult:
    """Add ``inputs`` to the corpus at ``out`` (created if needed) and rebuild its tables.

    An OpenAlex snapshot folder is read by its manifest (:mod:`openmsd.ingest.snapshot`); with
    ``since`` (YYYY-MM-DD), only its partitions updated on or after that day, as an input of
    its own beside the snapshot read whole.

    ``progress(label, total)`` may return a callback advanced by records read / papers built.
    A large folder's files are staged in parallel processes (:func:`stage`), started afresh
    (``spawn``): a script that calls this needs the ``if __name__ == "__main__":`` guard, as any
    use of Python's process pools does. The tables are built within
    :func:`openmsd.memory.memory_limit`.

    IngestError when another ingest holds the corpus, when the inputs hold no paper, or when
    ``OPENMSD_MEMORY_LIMIT`` is not a size.
    """
    inputs = list(inputs)
    for raw in inputs:  # a missing input is an error before the corpus directory is made
        list_files(Path(raw).resolve(), since)
    if fmt:
        get_reader(fmt)
    try:
        limit = memory_limit()
    except ValueError as error:
        raise IngestError(str(error)) from None
    with corpus_lock(out):
        return _ingest(inputs, out, fmt, strict, identifier, progress, limit, since)


def _ingest(inputs: Iterable[str | Path], out: str | Path, fmt: str | None, strict: bool,
            identifier: LanguageIdentifier | None,
            progress: Callable[[str, int | None], Callable[[int], None]] | None,
            limit: str, since: str | None = None) -> IngestResult:
    corpus = Corpus(out)
    manifest = corpus.manifest()
    committed = orjson.loads(orjson.dumps(manifest))  # as it is until this run commits
    entries: list[dict[str, Any]] = manifest["inputs"]
    result = IngestResult()
    phases = Phases()
    if fmt:
        get_reader(fmt)
    corpus.layout.remove_stale_staged({e["part"] for e in entries})
    checked = []  # every input is checked before anything is written
    for raw in inputs:
        path = Path(raw).resolve()
        files = list_files(path, since)
        if not files:
            raise IngestError(f"{path}: an empty folder: nothing to ingest")
        checked.append((path, files, fmt))
    named = {str(path) for path, _, _ in checked}
    for entry in entries:  # a part missing from staged/ (an older Spark build's): read again
        if entry["path"] in named or (corpus.staged / entry["part"]).is_dir():
            continue
        path = Path(entry["path"])
        if "://" in entry["path"] or not path.exists():
            raise IngestError(f"{corpus.root}: the staged part of {entry['path']} is missing "
                              f"({corpus.staged / entry['part']}) and the input is gone: "
                              "ingest every input again into a new corpus")
        checked.append((path, list_files(path), entry.get("format")))
    corpus.root.mkdir(parents=True, exist_ok=True)
    corpus.staged.mkdir(exist_ok=True)
    known = {e["part"] for e in entries}
    for orphan in corpus.staged.iterdir():  # parts of an ingest that crashed before its manifest
        if orphan.name not in known:
            shutil.rmtree(orphan) if orphan.is_dir() else orphan.unlink()
    for path, files, part_fmt in checked:  # a missing part is read in its own format
        part_digest = digest(files, path, part_fmt)
        entry = next((e for e in entries if _same_input(e, path, since)), None)
        if entry and entry["digest"] == part_digest and (corpus.staged / entry["part"]).exists():
            result.unchanged.append(str(path))
            continue
        last = max((e["ordinal"] for e in entries), default=-1)
        ordinal = entry["ordinal"] if entry else last + 1
        part = f"{ordinal:04d}-{part_digest}"
        report = Report(strict=strict)
        tick = progress(f"reading {path.name}", None) if progress else None
        with phases("stage"):
            counts = stage(path, corpus.staged / part, part_fmt, report, tick, since=since)
        if entry and entry["part"] != part and (corpus.staged / entry["part"]).exists():
            shutil.rmtree(corpus.staged / entry["part"])
        new = {"path": str(path), "ordinal": ordinal, "digest": part_digest, "part": part,
               "format": part_fmt, "files": len(files), "records": counts,
               **({"since": since} if since else {})}
        entries[:] = [e for e in entries if not _same_input(e, path, since)] + [new]
        entries.sort(key=lambda e: e["ordinal"])
        result.staged.append(str(path))

    if not sum(e["records"].get("papers", 0) for e in entries):
        read = [p for e in entries for p in _part_problems(corpus.staged / e["part"])]
        first = f"; first: {read[0]}" if read else ""
        names = ", ".join(result.staged) or "the inputs"
        raise IngestError(f"no papers read from {names} ({len(read):,} problems{first}); "
                          "nothing written")
    report = Report(strict=strict)
    parts = [(e["ordinal"], corpus.staged / e["part"], e["path"]) for e in entries]
    tick = progress("building papers", None) if progress else None

    def commit(summary: dict[str, Any]) -> None:  # the new tables are complete: record them
        result.build = summary
        _write_report(corpus, entries, report, result)
        manifest.update(schema_version=SCHEMA_VERSION, inputs=entries, build=summary)
        manifest.pop("engine", None)  # built here, whichever engine built it before
        write_json(corpus.layout.manifest, {**committed, NEXT: manifest})

    phases.seconds.setdefault("stage", 0.0)  # every input unchanged: nothing staged
    build_corpus(corpus, parts, report, identifier, tick, memory_limit=limit, before_swap=commit,
                 phases=phases, precedence=_precedence(entries), deleted=_deleted(entries))
    crash_point("ingest.before_manifest")
    write_json(corpus.layout.manifest, manifest)
    result.phases = phases.seconds
    return result


def _precedence(entries: list[dict[str, Any]]) -> dict[int, int]:
    """Each input's rank in the merge of a paper's fields: a snapshot's newer partitions
    (read ``since`` a day, the latest first) before every other input, which keep their
    order."""
    newer = sorted((e for e in entries if e.get("since")), key=lambda e: e["since"],
                   reverse=True)
    ranks = {e["ordinal"]: rank for rank, e in enumerate(newer)}
    rest = [e for e in entries if not e.get("since")]
    ranks.update({e["ordinal"]: len(newer) + rank for rank, e in enumerate(rest)})
    return ranks


def _deleted(entries: list[dict[str, Any]]) -> list[str]:
    """The aliases (``openalex:W...``) of the works the deletion ledgers of the corpus's
    snapshot inputs list, as they are on disk now."""
    found: set[str] = set()
    for entry in entries:
        snapshot = find_snapshot(Path(entry["path"]))
        if snapshot is not None:
            found.update(f"openalex:{w}" for w in deleted_works(snapshot.works))
    return sorted(found)


def _same_input(entry: dict[str, Any], path: Path, since: str | None) -> bool:
    """Whether the manifest ``entry`` is the input ``path`` read ``since`` (a snapshot's newer
    partitions are an input of their own)."""
    return entry["path"] == str(path) and entry.get("since") == since


def _write_report(corpus: Corpus, entries: list[dict[str, Any]], report: Report,
                  result: IngestResult) -> None:
    """The problems and counts of every part and of the build, written beside the corpus."""
    problems = [p for e in entries for p in _part_problems(corpus.staged / e["part"])]
    problems += report.problems
    counts: dict[str, int] = {}
    for e in entries:
        part_info = orjson.loads((corpus.staged / e["part"] / "part.json").read_bytes())
        for name, value in part_info["counts"].items():
            counts[name] = counts.get(name, 0) + value
    for name, value in report.counts.items():
        counts[name] = counts.get(name, 0) + value
    summary = Report(problems=problems)
    result.problems = problems
    result.report = {
        "inputs": [{"path": e["path"], "records": e["records"]} for e in entries],
        "counts": dict(sorted(counts.items())) | dict(sorted(result.build["counts"].items())),
        "problems": len(problems),
        "problems_by_reason": dict(summary.by_reason().most_common()),
    }
    write_jsonl(corpus.layout.problems, (p.as_dict() for p in problems))
    write_json(corpus.layout.report, result.report)

