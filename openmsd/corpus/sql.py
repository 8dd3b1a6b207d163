"""The engines the corpus build runs its SQL on: DuckDB in process, or Spark.

The build's queries (:mod:`openmsd.corpus.build`) are written once, in DuckDB's dialect. A
:class:`DuckDBSql` runs them as they are; a :class:`SparkSql` translates each with sqlglot to
Spark SQL and runs it on a SparkSession, so both engines join, merge and resolve with the same
statements. Both offer the same few operations: materialise a query as a named table, fetch
rows or Arrow, register an Arrow table, and write a query as Parquet with an optional Arrow
batch transform (language identification runs there: in process on DuckDB, inside the
executors' Python workers on Spark, through ``mapInArrow``).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import duckdb
import pyarrow as pa

from openmsd.io import ParquetSink, arrow_reader, arrow_table

__all__ = ["DuckDBSql", "SparkSql", "SqlEngine", "to_spark_sql"]

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


class DuckDBSql:
    """DuckDB: the statements as written; Parquet written as one file per table."""

    name = "duckdb"

    def __init__(self, con: duckdb.DuckDBPyConnection, batch_size: int = 50_000):
        self.con = con
        self.batch_size = batch_size

    def table(self, name: str, sql: str) -> None:
        self.con.execute(f"CREATE OR REPLACE TABLE {name} AS {sql}")

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


def to_spark_sql(sql: str) -> str:
    """A DuckDB statement in Spark SQL (sqlglot), with the few functions it leaves alone.

    >>> to_spark_sql("SELECT list_sort(list_distinct(list(s))) AS s FROM t")
    'SELECT ARRAY_SORT(ARRAY_DISTINCT(COLLECT_LIST(s))) AS s FROM t'
    """
    import sqlglot

    return sqlglot.transpile(sql, read="duckdb", write="spark")[0]


class SparkSql:
    """Spark: each statement translated by :func:`to_spark_sql`; a materialised table is
    written as Parquet under ``work`` and read back (so a retried stage never recomputes
    the joins before it); tables are written as directories of part files.

    A write with a transform feeds it the query's rows in order, in Arrow batches of
    ``batch_size`` rows, as DuckDB does: the transform sees the same batches on both engines
    (language identification's venue prior is counted within a batch), in one task."""

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
        from pyspark.sql.pandas.types import from_arrow_schema

        frame = (self.spark.createDataFrame(data) if data.num_rows else
                 self.spark.createDataFrame([], from_arrow_schema(data.schema)))
        frame.createOrReplaceTempView(name)

    def write(self, sql: str, target: str, schema: pa.Schema, meta: dict[str, str],
              transform: Transform | None = None, out_schema: pa.Schema | None = None,
              on_batch: Callable[[int], None] | None = None) -> int:
        from pyspark.sql.pandas.types import from_arrow_schema

        frame = self.sql(sql)
        if transform is not None:
            given = out_schema or schema
            self.spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch",
                                str(self.batch_size))
            frame = frame.coalesce(1).mapInArrow(_batches(transform), from_arrow_schema(given))
        frame = frame.select(*schema.names)
        _write_parquet(frame, target)
        return self.spark.read.parquet(target).count()

    def load(self, name: str, target: str) -> None:
        self.spark.read.parquet(target).createOrReplaceTempView(name)


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
