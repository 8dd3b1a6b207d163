"""The corpus directory: its tables, its manifest, DuckDB views.

Where each file lives is :mod:`openmsd.corpus.layout`'s. The tables::

    papers.parquet          one row per paper (schema.PAPERS)
    references.parquet      every reference of every paper, resolved or not (schema.REFERENCES)
    citations.parquet       links between corpus papers (schema.CITATIONS)
    contexts.parquet        citation contexts (schema.CONTEXTS)

Every file is written atomically with :mod:`openmsd.io`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from openmsd.corpus.layout import MANIFEST, NEXT, Layout
from openmsd.corpus.schema import SCHEMA_VERSION, TABLES


class CorpusError(ValueError):
    """A corpus directory that is missing, incomplete or of another schema version."""


class Corpus:
    """A corpus directory: paths of its tables, its manifest, and DuckDB views over them."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.layout = Layout(self.root)
        #: what the layers above keep in memory for this corpus object, by name, for as long
        #: as the object lives (search: its resources)
        self.kept: dict[str, Any] = {}

    def table_path(self, name: str) -> Path:
        return self.layout.table(name)

    @property
    def staged(self) -> Path:
        return self.layout.staged

    def manifest(self) -> dict[str, Any]:
        """The manifest; an empty one for a directory never ingested into.

        An ingest records the manifest to come under ``next`` before it swaps the new tables
        in, and writes it as the manifest after: when the tables are already the new build's
        (an ingest killed in between), ``next`` is the corpus's manifest."""
        path = self.layout.manifest
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
        if not self.layout.manifest.exists():
            raise CorpusError(f"{self.root}: not a corpus directory (no {MANIFEST}); "
                              "create one with 'openmsd ingest INPUT --out DIR'")
        manifest = self.manifest()
        build = manifest.get("build", {}).get("id")
        for name in TABLES:
            path = self.table_path(name)
            if not path.exists():
                raise CorpusError(f"{path}: missing table; rerun 'openmsd ingest'")
            if path.is_dir():
                raise CorpusError(f"{path}: a directory of part files, not the table file "
                                  "this openmsd reads (a corpus of an older 'ingest --engine "
                                  "spark'); ingest its inputs again into a new directory "
                                  "('openmsd ingest INPUT --out NEW_DIR', either engine)")
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

    def connect_read_only(self) -> duckdb.DuckDBPyConnection:
        """:meth:`connect`, then closed to every file but the tables, for reading: DuckDB's
        ``allowed_paths`` are the table files, ``enable_external_access`` is off and the
        configuration locked, so SQL run on it reads no other file and writes none (``COPY
        ... TO``, ``ATTACH``, ``INSTALL`` are refused by DuckDB); no progress bar either
        (DuckDB draws it on standard output, among the rows)."""
        con = self.connect()
        paths = ", ".join("'" + str(self.table_path(name)).replace("'", "''") + "'"
                          for name in TABLES)
        con.execute("SET enable_progress_bar = false")  # DuckDB's bar is written to stdout
        con.execute(f"SET allowed_paths = [{paths}]")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        return con

    def read(self, name: str, columns: list[str] | None = None) -> pa.Table:
        """One table, whole, as Arrow (for small corpora and tests)."""
        self.check()
        return pq.read_table(self.table_path(name), columns=columns)
