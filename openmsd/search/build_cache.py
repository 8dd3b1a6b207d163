"""Structures derived from one table of a corpus build, kept in memory once per process.

``per_build(corpus, "citations", load)`` calls ``load`` with ``citations.parquet`` opened (a
binary file) the first time, and again only when the manifest names another build (a
re-ingest). The open file's own build id (``openmsd.build`` in its metadata) must be the
manifest's, so a structure is never built from a table of another build (a re-ingest renames new
tables into place: the open file stays the one checked).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import pyarrow.parquet as pq

from openmsd.corpus.store import Corpus, CorpusError

T = TypeVar("T")

_CACHE: dict[tuple[Path, str, str], tuple[str, Any]] = {}
_LOCK = threading.Lock()


def current_build(corpus: Corpus) -> str:
    """The build id the manifest names (:class:`CorpusError` when there is none)."""
    build = corpus.manifest().get("build", {}).get("id")
    return build if build is not None else corpus.check()["build"]["id"]


def per_build(corpus: Corpus, table: str, load: Callable[[BinaryIO], T]) -> T:
    """``load(table file)`` for the corpus's current build, computed once per build."""
    build = current_build(corpus)
    key = (corpus.root.resolve(), table, f"{load.__module__}.{load.__qualname__}")
    with _LOCK:  # one load at a time; requests arriving meanwhile wait for it
        cached = _CACHE.get(key)
        if cached is not None and cached[0] == build:
            return cached[1]
        path = corpus.table_path(table)
        with open(path, "rb") as handle:
            found = (pq.read_schema(handle).metadata or {}).get(b"openmsd.build", b"").decode()
            if found != build:
                raise CorpusError(f"{path}: from build {found!r}, the manifest names {build!r} "
                                  "(an ingest in progress?); try again when it has finished")
            handle.seek(0)
            value = load(handle)
        _CACHE[key] = (build, value)
        return value
