"""The corpus directory: where each table lives, atomic writes, the manifest, DuckDB views.

Layout of ``CORPUS/``::

    manifest.json           schema version, the inputs in ingest order, the build id and counts
    papers.parquet          one row per paper (schema.PAPERS)
    references.parquet      every reference of every paper, resolved or not (schema.REFERENCES)
    citations.parquet       links between corpus papers (schema.CITATIONS)
    contexts.parquet        citation contexts (schema.CONTEXTS)
    ingest_report.json      counts and problems by reason; problems.jsonl lists every problem
    staged/NNNN-DIGEST/     what one input contributed: staged_{papers,references,contexts}.parquet

Every file is written to a temporary name in the same directory and renamed into place, so a
crash leaves either the old file or the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from openmsd.corpus.schema import SCHEMA_VERSION, TABLES

MANIFEST = "manifest.json"
NEXT = "next"  # the manifest an ingest is about to commit (see Corpus.manifest)
_UMASK = os.umask(0)
os.umask(_UMASK)
STAGED_DIR = "staged"


class CorpusError(ValueError):
    """A corpus directory that is missing, incomplete or of another schema version."""


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it onto ``target`` if the block succeeds."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, 0o666 & ~_UMASK)
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_json(target: Path, value: Any) -> None:
    """Write JSON atomically, keys sorted so equal values give equal bytes."""
    with atomic_path(target) as tmp:
        tmp.write_bytes(orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))


def write_jsonl(target: Path, rows: Iterator[dict[str, Any]] | list[dict[str, Any]]) -> None:
    """Write JSON lines atomically."""
    with atomic_path(target) as tmp, open(tmp, "wb") as handle:
        for row in rows:
            handle.write(orjson.dumps(row, option=orjson.OPT_SORT_KEYS) + b"\n")


class ParquetSink:
    """Write Arrow batches of one schema to a Parquet file atomically (on :meth:`close`)."""

    def __init__(self, target: Path, schema: pa.Schema, metadata: dict[str, str] | None = None):
        self.target = target
        self.schema = schema.with_metadata({**(schema.metadata or {}),
                                            **{k.encode(): v.encode()
                                               for k, v in (metadata or {}).items()}})
        self._context = atomic_path(target)
        self._tmp = self._context.__enter__()
        self._writer = pq.ParquetWriter(self._tmp, self.schema, compression="zstd")
        self.rows = 0

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        if batch.num_rows:
            table = pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch
            self._writer.write_table(table.select(self.schema.names).cast(self.schema))
            self.rows += batch.num_rows

    def write_rows(self, rows: list[dict[str, Any]]) -> None:
        if rows:
            self.write(pa.Table.from_pylist(rows, schema=self.schema))

    def close(self) -> None:
        self._writer.close()
        self._context.__exit__(None, None, None)

    def abort(self) -> None:
        self._writer.close()
        with contextlib.suppress(Exception):
            self._context.__exit__(RuntimeError, RuntimeError("aborted"), None)

    def __enter__(self) -> ParquetSink:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def temp_dir_beside(target: Path) -> Path:
    """A new empty directory beside ``target`` (same file system), for :func:`replace_dir`."""
    target.parent.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    os.chmod(path, 0o777 & ~_UMASK)
    return path


def replace_dir(source: Path, target: Path) -> None:
    """Move a finished directory onto ``target``, removing what was there."""
    trash = target.with_name(f".{target.name}.old")
    if trash.exists():
        shutil.rmtree(trash)
    if target.exists():
        os.replace(target, trash)
    os.replace(source, target)
    if trash.exists():
        shutil.rmtree(trash)


@contextlib.contextmanager
def building_dir(target: Path) -> Iterator[Path]:
    """Yield an empty directory beside ``target``; when the block succeeds, give what it holds
    the default permissions and move it onto ``target`` (replacing it); otherwise remove it.
    ``target`` is thus either absent, the old version, or complete."""
    tmp = temp_dir_beside(target)
    try:
        yield tmp
        for path in (tmp, *tmp.rglob("*")):  # mkdtemp and some writers make owner-only modes
            path.chmod((0o777 if path.is_dir() else 0o666) & ~_UMASK)
        replace_dir(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


class Corpus:
    """A corpus directory: paths of its tables, its manifest, and DuckDB views over them."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def table_path(self, name: str) -> Path:
        return self.root / f"{name}.parquet"

    @property
    def staged(self) -> Path:
        return self.root / STAGED_DIR

    def manifest(self) -> dict[str, Any]:
        """The manifest; an empty one for a directory never ingested into.

        An ingest records the manifest to come under ``next`` before it swaps the new tables
        in, and writes it as the manifest after: when the tables are already the new build's
        (an ingest killed in between), ``next`` is the corpus's manifest."""
        path = self.root / MANIFEST
        if not path.exists():
            return {"schema_version": SCHEMA_VERSION, "inputs": []}
        manifest = orjson.loads(path.read_bytes())
        upcoming = manifest.pop(NEXT, None)
        if upcoming and self._table_build("papers") == upcoming.get("build", {}).get("id"):
            manifest = upcoming
        if manifest.get("schema_version") != SCHEMA_VERSION:
            raise CorpusError(
                f"{path}: schema_version {manifest.get('schema_version')!r}, this openmsd "
                f"reads {SCHEMA_VERSION}: re-ingest the inputs into a new corpus")
        return manifest

    def check(self) -> dict[str, Any]:
        """The manifest of a complete corpus; :class:`CorpusError` naming what is missing."""
        if self.root.exists() and not self.root.is_dir():
            raise CorpusError(f"{self.root}: a file, not a corpus directory; create one with "
                              "'openmsd ingest INPUT --out DIR'")
        if not (self.root / MANIFEST).exists():
            raise CorpusError(f"{self.root}: not a corpus directory (no {MANIFEST}); "
                              "create one with 'openmsd ingest INPUT --out DIR'")
        manifest = self.manifest()
        build = manifest.get("build", {}).get("id")
        for name in TABLES:
            path = self.table_path(name)
            if not path.exists():
                raise CorpusError(f"{path}: missing table; rerun 'openmsd ingest'")
            if self._table_build(name) != build:
                raise CorpusError(f"{path}: from another build than {MANIFEST} names (an "
                                  "interrupted ingest?); rerun 'openmsd ingest'")
        return manifest

    def _table_build(self, name: str) -> str | None:
        """The build id a table was written by (None when it is missing)."""
        path = self.table_path(name)
        if not path.exists():
            return None
        return (pq.read_schema(path).metadata or {}).get(b"openmsd.build", b"").decode()

    def connect(self, database: str = ":memory:") -> duckdb.DuckDBPyConnection:
        """A DuckDB connection with one view per table (``papers``, ``citations``, ...).

        ``references`` is an SQL keyword: quote it, ``SELECT * FROM "references"``.
        """
        self.check()
        con = duckdb.connect(database)
        for name in TABLES:
            path = str(self.table_path(name)).replace("'", "''")
            con.execute(f"CREATE OR REPLACE VIEW \"{name}\" AS "
                        f"SELECT * FROM read_parquet('{path}')")
        return con

    def read(self, name: str, columns: list[str] | None = None) -> pa.Table:
        """One table, whole, as Arrow (for small corpora and tests)."""
        self.check()
        return pq.read_table(self.table_path(name), columns=columns)


def arrow_reader(con: duckdb.DuckDBPyConnection, sql: str, batch_size: int = 50_000
                 ) -> pa.RecordBatchReader:
    """Stream a query's result as Arrow batches (DuckDB 1.x and 2.x spellings)."""
    relation = con.sql(sql)
    if hasattr(relation, "to_arrow_reader"):
        return relation.to_arrow_reader(batch_size)
    return relation.record_batch(batch_size)


def arrow_table(con: duckdb.DuckDBPyConnection, sql: str) -> pa.Table:
    """A query's whole result as an Arrow table."""
    return arrow_reader(con, sql).read_all()
