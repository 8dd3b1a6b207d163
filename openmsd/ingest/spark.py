"""``openmsd ingest --engine spark``: the readers in Spark tasks, the build as Spark SQL.

Each input file is one task: the task runs the same reader as the single-process ingest
(:func:`openmsd.ingest.run.stage`) and writes the file's staged Parquet part atomically
under ``OUT/_staged/part=NNNNN`` (a part that was not renamed into place is never read), then
returns its counts and problems to the driver, which collects the report from all tasks. A task
that fails is retried by Spark (``spark.task.maxFailures``; in local mode ``local[N,F]``).
A local OpenAlex snapshot folder (``data/jsonl`` or ``data/parquet``, with its manifest) is
read by its manifest, as the single-process ingest reads it, ``since`` a day too (its partitions
updated on or after that day only); any other folder, a URI included, is listed recursively and
every file in it is a task (a snapshot's ``manifest.json`` and ``deleted_ids.csv`` are not
tasks). The works every snapshot input's ``deleted_ids.csv`` lists are left out of the build,
with their references and contexts, whichever input they come from, as the single-process build
leaves them out.

The corpus tables are then built by :func:`openmsd.corpus.build.derive`, the same SQL the
DuckDB path runs, translated to Spark SQL; languages are identified inside the executors
(``mapInArrow``) in every partition at once, in two passes: paper by paper, then with the venue
priors of :func:`openmsd.corpus.langid.with_priors`, counted between the passes over the whole
corpus by one aggregation (the same SQL DuckDB runs). Spark writes each table as part files
under ``OUT/_work``, which the driver then joins, in order, into the single Parquet file the
DuckDB path writes (``papers.parquet`` ..., each renamed into place whole, with its build id),
so every command reads a corpus built by either engine; the staged parts are then moved to
``OUT/staged/`` under the names the DuckDB ingest gives them, so ``openmsd ingest`` (DuckDB)
adds inputs to a corpus built on Spark; ``manifest.json`` is written last, so a corpus without
it is incomplete.

Into a local directory that already holds a corpus (either engine's), the Spark engine adds
as the DuckDB engine does (:mod:`openmsd.ingest.run`): each input file is a part keyed by the
digest of its content, an unchanged file is not read again, a changed one replaces its part in
place (its position in the merge order kept), a new one is appended; the tables are then
rebuilt on Spark from every part into a ``.build-*`` folder of the corpus and swapped in as the
DuckDB ingest swaps its own (the manifest to come recorded first), so a run killed at any point
leaves the old corpus or the new one readable. A corpus under a URI is not extended: it is
refused before anything is written. A local ``--out`` is held with the corpus's lock
(:func:`openmsd.corpus.corpus_lock`) while the run writes.

Inputs and ``--out`` may be local paths or URIs (``s3a://``, ``gs://``, ``hdfs://``,
``file://``); tasks copy a remote input file to local disk before reading it.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from functools import reduce
from pathlib import Path
from typing import Any

import orjson
from pyarrow import fs

from openmsd.corpus import (
    BATCH,
    MANIFEST,
    NEXT,
    PROBLEMS,
    REPORT,
    SCHEMA_VERSION,
    TABLES,
    Corpus,
    LanguageIdentifier,
    Layout,
    SparkSql,
    build_id,
    corpus_lock,
    derive,
    local_spark,
    staged_files,
)
from openmsd.crashpoint import crash_point
from openmsd.ingest.formats import get_reader
from openmsd.ingest.inputs import list_files
from openmsd.ingest.run import IngestResult, _write_report, digest, stage
from openmsd.ingest.snapshot import LAYOUTS, deleted_works, find_snapshot
from openmsd.io import write_json
from openmsd.report import IngestError, Problem, Report

__all__ = ["StagedFile", "deleted_aliases", "ingest_on_spark", "input_files", "stage_file"]

STAGED = "_staged"
LEDGERS = ("deleted_ids.csv", "deleted_ids.csv.gz")
"""The names of a snapshot's deletion ledger (in its ``works`` folder)."""


def _is_uri(path: str | Path) -> bool:
    return "://" in str(path)


def _filesystem(uri: str) -> tuple[Any, str]:
    return fs.FileSystem.from_uri(uri)


def _snapshot_file(path: str) -> bool:
    """Whether ``path`` is a snapshot's manifest or deletion ledger (no works to read)."""
    parts = path.rstrip("/").split("/")
    return len(parts) >= 2 and parts[-1] in ("manifest.json", *LEDGERS) and (
        parts[-2] == "works" or parts[-2] in LAYOUTS)


def input_files(inputs: list[str | Path], since: str | None = None) -> list[tuple[int, str]]:
    """``(input ordinal, file)`` for every file of the inputs, in input order then sorted path
    order (hidden files and ``_``-prefixed markers skipped; a local snapshot folder's parts by
    its manifest, those updated on or after ``since`` only); IngestError for a missing or
    empty input, or ``since`` with a URI."""
    files: list[tuple[int, str]] = []
    for ordinal, raw in enumerate(inputs):
        if _is_uri(raw):
            if since:
                raise IngestError(f"{raw}: --since {since} reads a local OpenAlex snapshot "
                                  "folder by its manifest; copy the snapshot to a local disk, "
                                  "or ingest this URI whole without --since")
            filesystem, path = _filesystem(str(raw))
            info = filesystem.get_file_info(path)
            if info.type == fs.FileType.NotFound:
                raise IngestError(f"{raw}: no such file or directory")
            scheme = str(raw).split("://", 1)[0]
            if info.type == fs.FileType.File:
                found = [path]
            else:
                found = sorted(i.path for i in filesystem.get_file_info(
                    fs.FileSelector(path, recursive=True)) if i.type == fs.FileType.File
                    and not any(p.startswith((".", "_")) for p in
                                i.path[len(path):].split("/"))
                    and not _snapshot_file(i.path))
            named = [f"{scheme}://{p}" if scheme != "file" else f"file://{p}" for p in found]
        else:
            named = [str(p) for p in list_files(Path(raw).resolve(), since)
                     if not p.name.startswith("_")]
        if not named:
            raise IngestError(f"{raw}: an empty folder: nothing to ingest")
        files += [(ordinal, name) for name in named]
    return files


def deleted_aliases(inputs: list[str | Path]) -> list[str]:
    """The aliases (``openalex:W...``) of the works the deletion ledgers of the snapshot inputs
    list: a local snapshot folder's, or a ``works/deleted_ids.csv`` under a URI input (read on
    the driver); IngestError (one line) for a bad ledger."""
    found: set[str] = set()
    for raw in inputs:
        if not _is_uri(raw):
            snapshot = find_snapshot(Path(raw).resolve())
            if snapshot is not None:
                found.update(deleted_works(snapshot.works))
            continue
        filesystem, path = _filesystem(str(raw))
        if filesystem.get_file_info(path).type != fs.FileType.Directory:
            continue
        ledgers = [i.path for i in filesystem.get_file_info(fs.FileSelector(path,
                                                                             recursive=True))
                   if i.type == fs.FileType.File and i.path.rsplit("/", 1)[-1] in LEDGERS
                   and i.path.rsplit("/", 2)[-2] == "works"]
        for ledger in ledgers:
            with tempfile.TemporaryDirectory(prefix="openmsd-ledger-") as tmp:
                works = Path(tmp) / "works"
                works.mkdir()
                local = works / ledger.rsplit("/", 1)[-1]
                fs.copy_files(ledger, str(local), source_filesystem=filesystem)
                try:
                    found.update(deleted_works(works))
                except IngestError as error:  # name the ledger where it is, not the copy
                    raise IngestError(str(error).replace(str(local), ledger)) from None
    return sorted(f"openalex:{work}" for work in found)


@dataclass
class StagedFile:
    """What one task read: the staged part, its record counts, counts and problems."""

    ordinal: int
    path: str
    part: str
    records: dict[str, int]
    counts: dict[str, int]
    problems: list[dict[str, str]]


def stage_file(ordinal: int, path: str, staged: str, fmt: str | None, strict: bool
               ) -> StagedFile:
    """Read one input file into the staged part ``STAGED/part=ORDINAL`` (atomically)."""
    report = Report(strict=strict)
    name = f"part={ordinal:05d}"
    with tempfile.TemporaryDirectory(prefix="openmsd-stage-") as tmp:
        local = Path(path)
        if _is_uri(path):
            filesystem, remote = _filesystem(path)
            local = Path(tmp) / Path(remote).name
            fs.copy_files(remote, str(local), source_filesystem=filesystem)
        if _is_uri(staged):
            target = Path(tmp) / name
            records = stage(local, target, fmt, report)
            filesystem, root = _filesystem(staged)
            fs.copy_files(str(target), f"{root}/{name}", destination_filesystem=filesystem)
        else:
            records = stage(local, Path(staged) / name, fmt, report)
    problems = [p.as_dict() | {"file": path if p.file == str(local) else p.file}
                for p in report.problems]
    return StagedFile(ordinal, path, name, records, dict(report.counts), problems)


def _run_tasks(spark: Any, jobs: list[tuple[int, str]], staged: str, fmt: str | None,
               strict: bool) -> list[StagedFile]:
    """One Spark task per (ordinal, file); the staged parts in ordinal order."""
    rdd = spark.sparkContext.parallelize(jobs, max(1, len(jobs)))
    try:
        done = rdd.map(lambda job: stage_file(job[0], job[1], staged, fmt, strict)).collect()
    except Exception as error:  # a Py4J error wrapping the task's Python traceback
        text = str(error)
        marker = "IngestError: "
        if marker in text:
            raise IngestError(text.split(marker, 1)[1].splitlines()[0]) from None
        raise
    return sorted(done, key=lambda s: s.ordinal)


def ingest_on_spark(inputs: list[str | Path], out: str | Path, fmt: str | None = None,
                    strict: bool = False, spark: Any = None,
                    identifier: LanguageIdentifier | None = None,
                    since: str | None = None) -> IngestResult:
    """Ingest ``inputs`` into the corpus at ``out`` (a path or URI) on Spark: a new one, or
    a local one that exists, added to (:func:`_extend_on_spark`); with ``since``
    (YYYY-MM-DD), of each snapshot folder only the partitions updated on or after that day.

    The corpus holds the same rows as :func:`openmsd.ingest.run.ingest` of the same
    inputs, in the same files (one Parquet file per table), the works the snapshots' deletion
    ledgers list left out. IngestError when ``out`` is a URI that already holds a corpus, when
    a snapshot's ``since`` or deletion ledger would be added to an existing corpus (the DuckDB
    engine does that), when another writer holds it, when an input is missing, when ``since``
    names an input that is no local snapshot folder, for a bad snapshot or ledger, in strict
    mode at the first problem, or when the inputs hold no paper.
    """
    if fmt:
        get_reader(fmt)
    files = input_files(list(inputs), since)
    deleted = deleted_aliases(list(inputs))
    root = str(out).rstrip("/")
    if _is_uri(root):
        _refuse_a_corpus(root, _uri_has_manifest(root))
        return _ingest_on_spark(inputs, root, files, fmt, strict, spark, identifier, since,
                                deleted)
    root = str(Path(root).resolve())
    with corpus_lock(root):
        if (Path(root) / MANIFEST).exists():
            if since or deleted:
                raise IngestError(f"{root}: already a corpus; adding a snapshot's --since "
                                  "partitions or deletion ledger to it runs on --engine duckdb")
            return _extend_on_spark(Corpus(root), files, fmt, strict, spark, identifier)
        return _ingest_on_spark(inputs, root, files, fmt, strict, spark, identifier, since,
                                deleted)


def _refuse_a_corpus(root: str, exists: bool) -> None:
    """IngestError when the URI ``root`` already holds a corpus: Spark extends local corpora
    only."""
    if exists:
        raise IngestError(f"{root}: already a corpus ({MANIFEST}); --engine spark adds to a "
                          "corpus in a local directory only: copy it to one, or name a new "
                          "directory with --out")


def _uri_has_manifest(root: str) -> bool:
    filesystem, path = _filesystem(root)
    return filesystem.get_file_info(f"{path}/{MANIFEST}").type == fs.FileType.File


def _ingest_on_spark(inputs: list[str | Path], root: str, files: list[tuple[int, str]],
                     fmt: str | None, strict: bool, spark: Any,
                     identifier: LanguageIdentifier | None, since: str | None,
                     deleted: list[str]) -> IngestResult:
    spark = spark or local_spark()
    staged = f"{root}/{STAGED}"
    done = _run_tasks(spark, list(enumerate(file for _, file in files)), staged, fmt, strict)
    problems = [Problem(**p) for s in done for p in s.problems]
    if not sum(s.records.get("papers", 0) for s in done):
        first = f"; first: {problems[0]}" if problems else ""
        raise IngestError(f"no papers read from {', '.join(map(str, inputs))} "
                          f"({len(problems):,} problems{first}); nothing written")

    engine = SparkSql(spark, f"{root}/_work", BATCH)
    origin = spark.createDataFrame([(s.ordinal, files[s.ordinal][0], s.ordinal) for s in done],
                                   "part int, input int, precedence int")
    frames = {}
    for kind in ("papers", "references", "contexts"):
        parts = [f"{staged}/{s.part}/staged_{kind}.parquet" for s in done]
        frames[kind] = spark.read.option("basePath", staged).parquet(*parts)
    frames["papers"] = frames["papers"].join(origin.hint("broadcast"), "part")
    report = Report(strict=strict)
    if deleted:
        frames = _leave_out(spark, frames, deleted, report)
    for kind, frame in frames.items():
        frame.createOrReplaceTempView(f"staged_{kind}")
    meta = {"openmsd.build": build_id([f"{s.path}:{s.part}" for s in done])}
    counts = derive(engine, root, report, {s.ordinal: s.path for s in done}, meta, identifier)
    problems += report.problems
    result = IngestResult(staged=[str(i) for i in inputs], problems=problems,
                          build={"id": meta["openmsd.build"], "counts": counts})
    totals: dict[str, int] = {}
    for s in done:
        for name, value in s.counts.items():
            totals[name] = totals.get(name, 0) + value
    for name, value in report.counts.items():
        totals[name] = totals.get(name, 0) + value
    summary = Report(problems=problems)
    result.report = {
        "engine": "spark",
        "inputs": [{"path": s.path, "records": s.records} for s in done],
        "counts": dict(sorted(totals.items())) | dict(sorted(counts.items())),
        "problems": len(problems),
        "problems_by_reason": dict(summary.by_reason().most_common()),
    }
    _finish(root, result, done, fmt, since)
    return result


def _leave_out(spark: Any, frames: dict[str, Any], deleted: list[str], report: Report
               ) -> dict[str, Any]:
    """The staged ``frames`` without the papers having an alias in ``deleted``, nor the
    references and contexts of those papers (as :func:`openmsd.corpus.build.build_corpus`
    leaves them out); their number counted as ``papers.deleted_left_out``."""
    # optional: the spark extra; pyspark takes ~0.3 s to import
    from pyspark.sql import functions as F

    aliases = spark.createDataFrame([(a,) for a in deleted], "alias string")
    keys = (frames["papers"].select("key", F.explode("aliases").alias("alias"))
            .join(aliases.hint("broadcast"), "alias").select("key").distinct()).cache()
    report.count("papers.deleted_left_out", keys.count())
    citing = keys.withColumnRenamed("key", "citing").hint("broadcast")
    return {"papers": frames["papers"].join(keys.hint("broadcast"), "key", "left_anti"),
            "references": frames["references"].join(citing, "citing", "left_anti"),
            "contexts": frames["contexts"].join(citing, "citing", "left_anti")}


def _finish(root: str, result: IngestResult, done: list[StagedFile], fmt: str | None,
            since: str | None = None) -> None:
    """Write the report, remove the work files, move the staged parts to where the DuckDB
    ingest keeps them (a local corpus), and write the manifest last."""
    rows = b"".join(orjson.dumps(p.as_dict(), option=orjson.OPT_SORT_KEYS) + b"\n"
                    for p in result.problems)
    option = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
    manifest = {"schema_version": SCHEMA_VERSION, "engine": "spark", "build": result.build,
                "tables": {name: f"{name}.parquet" for name in TABLES},
                "inputs": [{"path": s.path, "ordinal": s.ordinal, "part": s.part,
                            "format": fmt, "files": 1, "records": s.records,
                            "digest": digest([Path(s.path)], Path(s.path), fmt)
                            if not _is_uri(s.path) else None,
                            **({"since": since} if since else {})} for s in done]}
    if _is_uri(root) and not root.startswith("file://"):
        filesystem, path = _filesystem(root)
        for name, data in ((PROBLEMS, rows),
                           (REPORT, orjson.dumps(result.report, option=option))):
            with filesystem.open_output_stream(f"{path}/{name}") as handle:
                handle.write(data)
        filesystem.delete_dir_contents(f"{path}/_work", missing_dir_ok=True)
        with filesystem.open_output_stream(f"{path}/{MANIFEST}") as handle:
            handle.write(orjson.dumps(manifest, option=option))
        return
    local = Path(root.removeprefix("file://"))
    (local / f".{PROBLEMS}.tmp").write_bytes(rows)
    (local / f".{PROBLEMS}.tmp").replace(local / PROBLEMS)
    write_json(local / REPORT, result.report)
    shutil.rmtree(local / "_work", ignore_errors=True)
    staged = Layout(local).staged
    staged.mkdir(exist_ok=True)
    for entry in manifest["inputs"]:  # the DuckDB ingest's names: ORDINAL-DIGEST
        name = f"{entry['ordinal']:04d}-{entry['digest'] or 'uri'}"
        shutil.rmtree(staged / name, ignore_errors=True)  # a killed run's
        (local / STAGED / entry["part"]).replace(staged / name)
        entry["part"] = name
    shutil.rmtree(local / STAGED, ignore_errors=True)
    write_json(local / MANIFEST, manifest)


def _extend_on_spark(corpus: Corpus, files: list[tuple[int, str]], fmt: str | None,
                     strict: bool, spark: Any, identifier: LanguageIdentifier | None
                     ) -> IngestResult:
    """Add ``files`` to the existing local ``corpus`` (held with its lock) on Spark, by the
    DuckDB ingest's rules: each file a part keyed by its digest (unchanged: not read again;
    changed: read again under its ordinal; new: appended), then every table rebuilt from all
    parts and swapped in as one unit (:func:`_rebuild_on_spark`)."""
    manifest = corpus.manifest()
    committed = orjson.loads(orjson.dumps(manifest))  # as it is until this run commits
    entries: list[dict[str, Any]] = manifest["inputs"]
    corpus.layout.remove_stale_staged({e["part"] for e in entries})
    for entry in entries:
        if not (corpus.staged / entry["part"]).is_dir():
            raise IngestError(f"{corpus.root}: the staged part of {entry['path']} is missing "
                              f"({corpus.staged / entry['part']}): add to this corpus with "
                              "--engine duckdb, which reads its input again")
    result = IngestResult()
    last = max((e["ordinal"] for e in entries), default=-1)
    todo: list[tuple[int, str, str]] = []  # (ordinal, file, digest) to read
    for _, file in files:
        part_digest = "uri" if _is_uri(file) else digest([Path(file)], Path(file), fmt)
        entry = next((e for e in entries if e["path"] == file and not e.get("since")), None)
        if entry and entry["digest"] == part_digest and part_digest != "uri":
            result.unchanged.append(file)
            continue
        if entry:
            ordinal = entry["ordinal"]
        else:
            last += 1
            ordinal = last
        todo.append((ordinal, file, part_digest))
    staged = corpus.root / STAGED
    spark = spark or local_spark()
    if todo:
        done = {s.ordinal: s for s in _run_tasks(spark, [(o, f) for o, f, _ in todo],
                                                 str(staged), fmt, strict)}
        for ordinal, file, part_digest in todo:
            name = f"{ordinal:04d}-{part_digest}"
            shutil.rmtree(corpus.staged / name, ignore_errors=True)  # a killed run's
            (staged / done[ordinal].part).replace(corpus.staged / name)
            old = next((e for e in entries if e["ordinal"] == ordinal), None)
            if old and old["part"] != name:
                shutil.rmtree(corpus.staged / old["part"], ignore_errors=True)
            entries[:] = [e for e in entries if e["ordinal"] != ordinal] + [{
                "path": file, "ordinal": ordinal, "digest": part_digest, "part": name,
                "format": fmt, "files": 1, "records": done[ordinal].records}]
            result.staged.append(file)
        entries.sort(key=lambda e: e["ordinal"])
    shutil.rmtree(staged, ignore_errors=True)
    crash_point("ingest.parts_in_place")  # the new parts in place; tables, manifest the old
    if not sum(e["records"].get("papers", 0) for e in entries):
        raise IngestError(f"no papers read from {', '.join(result.staged) or 'the inputs'}; "
                          "nothing written")
    _rebuild_on_spark(corpus, entries, manifest, committed, result, strict, spark, identifier)
    return result


def _rebuild_on_spark(corpus: Corpus, entries: list[dict[str, Any]], manifest: dict[str, Any],
                      committed: dict[str, Any], result: IngestResult, strict: bool,
                      spark: Any, identifier: LanguageIdentifier | None) -> None:
    """Every table rebuilt on Spark from the staged parts of ``entries`` (each row with its
    ``part``, ``input`` and ``precedence``: the ordinal, as the DuckDB build reads them) into
    a ``.build-*`` folder of the corpus; the manifest to come recorded, the tables swapped in,
    then the manifest written."""
    # optional: the spark extra; pyspark takes ~0.3 s to import
    from pyspark.sql import functions as F

    with tempfile.TemporaryDirectory(dir=corpus.root, prefix=".build-") as tmp:
        for kind in ("papers", "references", "contexts"):
            frames = [spark.read.parquet(str(path))
                      .withColumn("seq", F.col("seq") + F.lit(first))
                      .withColumn("part", F.lit(e["ordinal"]))
                      .withColumn("input", F.lit(e["ordinal"]))
                      .withColumn("precedence", F.lit(e["ordinal"]))
                      for e in entries
                      for path, first in staged_files(corpus.staged / e["part"],
                                                      f"staged_{kind}.parquet")]
            reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True),
                   frames).createOrReplaceTempView(f"staged_{kind}")
        report = Report(strict=strict)
        meta = {"openmsd.build": build_id([e["part"] for e in entries])}
        counts = derive(SparkSql(spark, f"{tmp}/_work", BATCH), tmp, report,
                        {e["ordinal"]: e["path"] for e in entries}, meta, identifier)
        result.build = {"id": meta["openmsd.build"], "counts": counts}
        _write_report(corpus, entries, report, result)
        result.report["engine"] = "spark"
        write_json(corpus.layout.report, result.report)
        manifest.update(schema_version=SCHEMA_VERSION, engine="spark", inputs=entries,
                        build=result.build)
        write_json(corpus.layout.manifest, {**committed, NEXT: manifest})
        crash_point("ingest.before_swap")
        for name in TABLES:
            (Path(tmp) / f"{name}.parquet").replace(corpus.table_path(name))
    crash_point("ingest.before_manifest")
    write_json(corpus.layout.manifest, manifest)
