"""The ground floor's input and output: atomic writes, Parquet sinks, DuckDB results as Arrow,
and the cache root.

Every file is written to a temporary name in the same directory and renamed into place, so a
crash leaves either the old file or the new one, never half of one; a directory is built beside
its target and switched in with one rename (:func:`building_dir`).

>>> import tempfile
>>> target = Path(tempfile.mkdtemp()) / "a.json"
>>> write_json(target, {"b": 1, "a": 2})
>>> target.read_text().split()
['{', '"a":', '2,', '"b":', '1', '}']
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import orjson
import pyarrow as pa
import pyarrow.parquet as pq

__all__ = [
    "ParquetSink",
    "arrow_reader",
    "arrow_table",
    "atomic_path",
    "building_dir",
    "cache_root",
    "numbers",
    "parquet_list",
    "refusal",
    "refused_errno",
    "replace_dir",
    "temp_dir_beside",
    "write_json",
    "write_jsonl",
]

_NUMPY_TYPES = {pa.int8(): "i1", pa.int16(): "<i2", pa.int32(): "<i4", pa.int64(): "<i8",
                pa.uint8(): "u1", pa.uint16(): "<u2", pa.uint32(): "<u4", pa.uint64(): "<u8",
                pa.float32(): "<f4", pa.float64(): "<f8"}


def numbers(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """An Arrow array of numbers without nulls as a NumPy array (a view of its buffer where it
    has one chunk). ``Array.to_numpy`` would import pandas (most of a second) on first use.

    >>> numbers(pa.chunked_array([[1, 2], [3]], pa.int32())).tolist()
    [1, 2, 3]
    """
    if isinstance(values, pa.ChunkedArray):
        values = (values.combine_chunks() if values.num_chunks
                  else pa.array([], values.type))  # type: ignore[assignment]
    if values.type not in _NUMPY_TYPES or values.null_count:
        raise TypeError(f"numbers: expected numbers without nulls, not {values.type} with "
                        f"{values.null_count} nulls")
    buffer = values.buffers()[1]
    if buffer is None:
        return np.zeros(0, _NUMPY_TYPES[values.type])
    data = np.frombuffer(buffer, dtype=_NUMPY_TYPES[values.type])
    return data[values.offset:values.offset + len(values)]


_UMASK = os.umask(0)
os.umask(_UMASK)


def cache_root() -> Path:
    """Where openmsd keeps what it builds once (models, ONNX exports): ``$OPENMSD_CACHE``, else
    ``$XDG_CACHE_HOME/openmsd``, else ``~/.cache/openmsd``."""
    if os.environ.get("OPENMSD_CACHE"):
        return Path(os.environ["OPENMSD_CACHE"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "openmsd"


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it onto ``target`` if the block succeeds."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as error:  # name the file to be written, not a temporary name
        if error.errno in REFUSED:
            raise _named(error, target) from error
        raise
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, 0o666 & ~_UMASK)
        os.replace(tmp_path, target)
    except OSError as error:  # name the file being written, not its temporary name
        if error.filename in (None, tmp, str(tmp_path)) and error.errno in REFUSED:
            raise _named(error, target) from error
        raise
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


REFUSED = {errno.EACCES: "permission denied", errno.EPERM: "permission denied",
           errno.EROFS: "a read-only file system",
           errno.EFBIG: "file too large (the file-size limit, 'ulimit -f', was reached)",
           errno.ENOSPC: "no space left on the device",
           errno.EDQUOT: "the disk quota is exceeded"}
"""The errors of a write the machine refused, and how :func:`refusal` says them."""


def refused_errno(text: str) -> int | None:
    """The errno of a refused write whose text (``strerror``) a library's message carries
    (FAISS's and DuckDB's errors are no ``OSError``), else None.

    >>> refused_errno("write error in /x/index.faiss: 4051 != 616448 (File too large)")
    27
    """
    return next((code for code in REFUSED if os.strerror(code) in text), None)


def _named(error: OSError, path: str | Path) -> OSError:
    """``error`` naming ``path`` (an error of a library that names no file: pyarrow's)."""
    code = error.errno
    return OSError(code, os.strerror(code) if code else str(error), str(path))


def refusal(error: BaseException) -> str | None:
    """One line for a write the machine refused (permission, read-only file system, file-size
    limit, full disk or quota: an ``OSError``, or a DuckDB error of one), naming the file; None
    for any other error.

    >>> refusal(PermissionError(13, "Permission denied", "/c/papers.parquet"))
    '/c/papers.parquet: cannot write: permission denied'
    >>> refusal(ValueError("x")) is None
    True
    """
    if isinstance(error, OSError) and error.errno in REFUSED:
        where = f"{error.filename}: " if error.filename else ""
        return f"{where}cannot write: {REFUSED[error.errno]}"
    if isinstance(error, duckdb.Error):  # IOException, or a commit's TransactionException
        text = str(error)
        code = refused_errno(text)
        if code is not None:
            path = re.search(r'file "([^"]+)"', text)
            return f"{path[1] + ': ' if path else ''}cannot write: {REFUSED[code]}"
    return None


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
            try:
                self._writer.write_table(table.select(self.schema.names).cast(self.schema))
            except OSError as error:
                raise _named(error, self.target) from error
            self.rows += batch.num_rows

    def write_rows(self, rows: list[dict[str, Any]]) -> None:
        if rows:
            self.write(pa.Table.from_pylist(rows, schema=self.schema))

    def close(self) -> None:
        try:
            self._writer.close()  # the footer: a write that can fail too
        except OSError as error:
            self.abort()
            raise _named(error, self.target) from error
        self._context.__exit__(None, None, None)

    def abort(self) -> None:
        with contextlib.suppress(OSError):
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
    """Move a finished directory onto ``target``, removing what was there. On Linux an existing
    ``target`` is exchanged with ``source`` in one step (``renameat2(RENAME_EXCHANGE)``), so a
    kill at any moment leaves the old directory or the new one at ``target``; elsewhere, or on a
    file system without the exchange, the old one is first moved to ``.NAME.old`` (a kill
    between the two renames leaves it there, and no ``target``)."""
    trash = target.with_name(f".{target.name}.old")
    if trash.exists():
        shutil.rmtree(trash)
    if target.exists() and _exchange(source, target):
        shutil.rmtree(source)  # now the old directory
        return
    if target.exists():
        os.replace(target, trash)
    os.replace(source, target)
    if trash.exists():
        shutil.rmtree(trash)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap the paths ``a`` and ``b`` atomically (Linux ``renameat2``); False where the
    system or the file system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    raise OSError(code, os.strerror(code), str(b))


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



def parquet_list(paths: list[Path]) -> str:
    """A DuckDB list literal of Parquet files for ``read_parquet``: each file named, never
    a glob pattern (a folder named ``br[1]`` or ``a*`` is read as it is named).

    >>> parquet_list([Path("c/br[1]/part-00000.parquet"), Path("it's.parquet")])
    "['c/br[1]/part-00000.parquet', 'it''s.parquet']"
    """
    return "[" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths) + "]"


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
