"""Engines that run the relation expressions: DuckDB in process, or Spark.

The pair derivation and the split are Ibis expressions (:mod:`openmsd.relations.pairs`,
:mod:`openmsd.relations.split`); an :class:`Engine` reads Parquet into Ibis tables, runs
expressions, and writes their results as Parquet, atomically. ``duckdb`` is the default;
``spark`` runs the same expressions on a SparkSession (local mode by default, or whatever
``spark-submit`` configured: see ``docs/relations.md``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ibis
import pyarrow as pa
import pyarrow.dataset as ds

from openmsd.corpus import local_spark

ENGINES = ("duckdb", "spark")


@dataclass
class Engine:
    """An Ibis backend with Parquet in and out."""

    name: str
    backend: Any
    _session: Any = field(default=None, repr=False)

    def read(self, path: str | Path) -> ibis.Table:
        """A Parquet file or directory of part files as an Ibis table."""
        return self.backend.read_parquet(str(path))

    def table(self, data: pa.Table) -> ibis.Table:
        """An in-memory Arrow table as an Ibis table of this engine."""
        return ibis.memtable(data)

    def to_arrow(self, expr: ibis.Table) -> pa.Table:
        return self.backend.to_pyarrow(expr)

    def write(self, expr: ibis.Table, target: str | Path) -> int:
        """Write ``expr`` as Parquet at ``target`` (a file on DuckDB, a directory of parts on
        Spark) and return its rows. A local target is replaced only once the write has
        finished; a URI (``s3a://``, ``gs://``, ``hdfs://``) is left to the engine's committer
        (Spark's writes a ``_SUCCESS`` marker last)."""
        if "://" in str(target):
            self.backend.to_parquet(expr, str(target), **self._overwrite)
            return int(self.backend.execute(self.read(target).count()))
        target = Path(target)
        tmp = target.with_name(f".{target.name}.tmp")
        _remove(tmp)
        self.backend.to_parquet(expr, str(tmp))
        _remove(target)
        os.replace(tmp, target)
        return ds.dataset(str(target), format="parquet").count_rows()

    @property
    def _overwrite(self) -> dict[str, Any]:
        return {"mode": "overwrite"} if self.name == "spark" else {}

    def close(self) -> None:
        if self.name == "duckdb":
            self.backend.disconnect()


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def connect(name: str = "duckdb", *, memory_limit: str | None = None,
            spill: str | Path | None = None, spark: Any = None) -> Engine:
    """An engine by name: ``duckdb`` (in process; ``memory_limit`` such as ``"2GB"``, beyond
    which it spills to the folder ``spill``) or ``spark`` (``spark``: a SparkSession to use;
    by default the active one, else a local one on every core)."""
    if name == "duckdb":
        backend = ibis.duckdb.connect()
        if memory_limit:
            backend.raw_sql(f"SET memory_limit = '{memory_limit}'")
        if spill is not None:
            quoted = str(spill).replace("'", "''")
            backend.raw_sql(f"SET temp_directory = '{quoted}'")
        backend.raw_sql("SET preserve_insertion_order = false")
        return Engine(name, backend)
    if name == "spark":
        session = spark or local_spark(retries=0)
        return Engine(name, ibis.pyspark.connect(session), session)
    raise ValueError(f"unknown engine {name!r}: expected one of {', '.join(ENGINES)}")

