"""The engines the corpus build runs its SQL on: DuckDB in process, or Spark.

The build's queries (:mod:`openmsd.corpus.build`) are written once, in DuckDB's dialect. A
:class:`DuckDBSql` runs them as they are; a :class:`SparkSql` translates each with sqlglot to
Spark SQL and runs it on a SparkSession, so both engines join, merge and resolve with the same
statements. Both offer the same few operations: materialise a query as a named table, fetch
rows or Arrow, register an Arrow table, and write a query as Parquet with an optional Arrow
batch transform (language identification runs there: in process on DuckDB, inside the
executors' Python workers on Spark, through ``mapInArrow``). :func:`local_spark` is the
session every Spark job of openmsd runs on when none is given (ingest, relations, embedding).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from pyarrow import fs

from openmsd.io import ParquetSink, arrow_reader, arrow_table

__all__ = ["DuckDBSql", "SparkSql", "SqlEngine", "local_spark", "to_spark_sql"]

Transform = Callable[[pa.RecordBatch], pa.RecordBatch]


class SqlEngine(Protocol):
    """What the corpus build needs from an engine."""

    name: str

    def table(self, name: str, sql: str) -> None:
        """Materialise ``sql`` as the table ``name``."""

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        """A small query's rows, in its order."""

    def arrow(self, sql: str) -> pa.Table:
        """A query's result as one Arrow table (on the driver)."""

    def register(self, name: str, data: pa.Table) -> None:
        """An Arrow table as the table ``name``."""

    def write(self, sql: str, target: str, schema: pa.Schema, meta: dict[str, str],
              transform: Transform | None = None, out_schema: pa.Schema | None = None,
              on_batch: Callable[[int], None] | None = None) -> int:
        """Write ``sql`` (through ``transform``) as Parquet of ``schema`` at ``target``; rows."""

    def load(self, name: str, target: str) -> None:
        """The Parquet written at ``target`` as the table ``name``."""

    def drop(self, name: str) -> None:
        """Forget the table ``name`` (its memory or disk is free for what follows)."""


class DuckDBSql:
    """DuckDB: the statements as written; Parquet written as one file per table."""

    name = "duckdb"

    def __init__(self, con: duckdb.DuckDBPyConnection, batch_size: int = 50_000):
        self.con = con
        self.batch_size = batch_size

    def table(self, name: str, sql: str) -> None:  # in memory, spilled beyond its limit
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {sql}")

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        return self.con.execute(sql).fetchall()

    def arrow(self, sql: str) -> pa.Table:
        return arrow_table(self.con, sql)

    def register(self, name: str, data: pa.Table) -> None:
        self.con.register(name, data)

    def write(self, sql: str, target: str, schema: pa.Schema, meta: dict[str, str],
              transform: Transform | None = None, out_schema: pa.Schema | None = None,
              on_batch: Callable[[int], None] | None = None) -> int:
        with ParquetSink(Path(target), schema, meta) as sink:
            for batch in arrow_reader(self.con, sql, self.batch_size):
                sink.write(transform(batch) if transform else batch)
                if on_batch:
                    on_batch(batch.num_rows)
            return sink.rows

    def load(self, name: str, target: str) -> None:
        path = str(target).replace("'", "''")
        self.con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM read_parquet('{path}')")

    def drop(self, name: str) -> None:
        self.con.execute(f"DROP TABLE IF EXISTS {name}")


def to_spark_sql(sql: str) -> str:
    """A DuckDB statement in Spark SQL (sqlglot), with the few functions it leaves alone.

    >>> to_spark_sql("SELECT list_sort(list_distinct(list(s))) AS s FROM t")
    'SELECT ARRAY_SORT(ARRAY_DISTINCT(COLLECT_LIST(s))) AS s FROM t'
    """
    import sqlglot  # optional: the spark extra; sqlglot takes ~0.3 s to import

    return sqlglot.transpile(sql, read="duckdb", write="spark")[0]


def local_spark(cores: int | None = None, retries: int = 2) -> Any:
    """The active SparkSession, or a local one on ``cores`` cores whose failed tasks are
    retried ``retries`` times (no UI, few shuffle partitions). Its Python workers run this
    interpreter (``PYSPARK_PYTHON`` where set), so an unactivated virtual environment works."""
    # optional: the spark extra; pyspark takes ~0.3 s to import
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    cores = cores or os.cpu_count() or 1
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # PySpark reads only the variable
    return (SparkSession.builder.master(f"local[{cores},{retries + 1}]")
            .appName("openmsd")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", str(max(4, 2 * cores)))
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .config("spark.driver.memory", os.environ.get("OPENMSD_SPARK_MEMORY", "4g"))
            .getOrCreate())


class SparkSql:
    """Spark: each statement translated by :func:`to_spark_sql`; a materialised table is
    written as Parquet under ``work`` and read back (so a retried stage never recomputes
    the joins before it). What is written under ``work`` stays a directory of part files;
    a table written anywhere else (the corpus tables) is then joined, part after part in
    order, into one Parquet file of ``schema`` with ``meta``, the layout DuckDB writes, so
    every reader of a corpus reads either engine's.

    A write with a transform feeds it the query's rows in Arrow batches of at most
    ``batch_size`` rows, in every partition's task at once (``mapInArrow``): a transform must
    not depend on which rows share its batch (language identification's venue prior is
    counted over the whole corpus between two passes, :mod:`openmsd.corpus.build`)."""

    name = "spark"

    def __init__(self, spark: Any, work: str, batch_size: int = 50_000):
        self.spark = spark
        self.work = work.rstrip("/")
        self.batch_size = batch_size

    def sql(self, sql: str) -> Any:
        """A DuckDB-dialect query as a Spark DataFrame."""
        return self.spark.sql(to_spark_sql(sql))

    def table(self, name: str, sql: str) -> None:
        target = f"{self.work}/{name}.parquet"
        self.sql(sql).write.mode("overwrite").parquet(target)
        self.load(name, target)

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        return [tuple(row) for row in self.sql(sql).collect()]

    def arrow(self, sql: str) -> pa.Table:
        return self.sql(sql).toArrow()

    def register(self, name: str, data: pa.Table) -> None:
        # optional: the spark extra; pyspark takes ~0.3 s to import
        from pyspark.sql.pandas.types import from_arrow_schema

        frame = (self.spark.createDataFrame(data) if data.num_rows else
                 self.spark.createDataFrame([], from_arrow_schema(data.schema)))
        frame.createOrReplaceTempView(name)

    def write(self, sql: str, target: str, schema: pa.Schema, meta: dict[str, str],
              transform: Transform | None = None, out_schema: pa.Schema | None = None,
              on_batch: Callable[[int], None] | None = None) -> int:
        # optional: the spark extra; pyspark takes ~0.3 s to import
        from pyspark.sql.pandas.types import from_arrow_schema

        frame = self.sql(sql)
        if transform is not None:
            given = out_schema or schema
            self.spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch",
                                str(self.batch_size))
            frame = frame.mapInArrow(_batches(transform), from_arrow_schema(given))
        frame = frame.select(*schema.names)
        if target.startswith(f"{self.work}/"):
            _write_parquet(frame, target)
            return self.spark.read.parquet(target).count()
        parts = f"{self.work}/{target.rstrip('/').rsplit('/', 1)[-1]}.parts"
        _write_parquet(frame, parts)
        return _join_parts(parts, target, schema, meta)

    def load(self, name: str, target: str) -> None:
        self.spark.read.parquet(target).createOrReplaceTempView(name)

    def drop(self, name: str) -> None:
        self.spark.catalog.dropTempView(name)


def _join_parts(parts: str, target: str, schema: pa.Schema, meta: dict[str, str]) -> int:
    """Join the Parquet part files of the directory ``parts`` (a path or URI), in name order
    (Spark names them in the order of the rows), into one Parquet file of ``schema`` with
    ``meta`` at ``target``, written atomically (a local file is renamed into place; an object
    store's object appears whole once uploaded); returns the rows. Streams row group by row
    group: the driver never holds a table."""
    import pyarrow.dataset as ds  # lazy: pyarrow.dataset loads pandas (~1.4 s)

    files = sorted(p for p in _list(parts) if p.rsplit("/", 1)[-1].startswith("part-"))
    if "://" in target and not target.startswith("file://"):
        filesystem, path = fs.FileSystem.from_uri(target)
        with filesystem.open_output_stream(path) as stream:
            writer = pq.ParquetWriter(stream, _with_meta(schema, meta), compression="zstd")
            rows = _copy_parts(ds, files, writer, _with_meta(schema, meta))
            writer.close()
        return rows
    local = Path(target.removeprefix("file://"))
    if local.is_dir():  # a table of an older layout: a directory of parts
        shutil.rmtree(local)
    with ParquetSink(local, schema, meta) as sink:
        for file in files:
            for batch in ds.dataset(file.removeprefix("file://"), format="parquet").to_batches():
                sink.write(batch)
        return sink.rows


def _with_meta(schema: pa.Schema, meta: dict[str, str]) -> pa.Schema:
    return schema.with_metadata({**(schema.metadata or {}), **meta})


def _copy_parts(ds: Any, files: list[str], writer: Any, schema: pa.Schema) -> int:
    rows = 0
    for file in files:
        for batch in ds.dataset(file).to_batches():
            if batch.num_rows:
                writer.write_table(pa.Table.from_batches([batch]).select(schema.names)
                                   .cast(schema))
                rows += batch.num_rows
    return rows


def _list(directory: str) -> list[str]:
    """The files directly in ``directory`` (a path or URI), as paths or URIs."""
    if "://" in directory and not directory.startswith("file://"):
        filesystem, path = fs.FileSystem.from_uri(directory)
        scheme = directory.split("://", 1)[0]
        return [f"{scheme}://{i.path}" for i in filesystem.get_file_info(fs.FileSelector(path))
                if i.type == fs.FileType.File]
    return [str(p) for p in Path(directory.removeprefix("file://")).iterdir() if p.is_file()]


def _batches(transform: Transform) -> Callable[[Any], Any]:
    def run(batches: Any) -> Any:
        for batch in batches:
            yield transform(batch)
    return run


def _write_parquet(frame: Any, target: str) -> None:
    """Write ``frame`` at ``target``: a local directory appears whole (written beside, then
    renamed); a URI is left to Spark's committer, whose ``_SUCCESS`` marker comes last."""
    if "://" in target and not target.startswith("file://"):
        frame.write.mode("overwrite").parquet(target)
        return
    path = Path(target.removeprefix("file://"))
    tmp = path.with_name(f".{path.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    frame.write.mode("overwrite").parquet(str(tmp))
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
    tmp.replace(path)
