"""Structures derived from one table of a corpus build, kept in memory once per process.

``per_build(corpus, "citations", load)`` calls ``load`` with ``citations.parquet`` opened (a
binary file) the first time, and again only when the manifest names another build (a
re-ingest). The open file's own build id (``openmsd.build`` in its metadata) must be the
manifest's, so a structure is never built from a table of another build (a re-ingest renames new
tables into place: the open file stays the one checked).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, BinaryIO, TypeVar

import pyarrow.parquet as pq

from openmsd.corpus import MANIFEST, Corpus, CorpusError

T = TypeVar("T")

_CACHE: dict[tuple[str, str, str], tuple[str, Any]] = {}
_BUILDS: dict[str, tuple[tuple[int, ...], str]] = {}
_LOCK = threading.Lock()


_PATHS: dict[str, tuple[str, str, str]] = {}


def _paths(corpus: Corpus) -> tuple[str, str, str]:
    """The corpus root's, manifest's and papers table's absolute paths; made once per
    absolute root (a request asks several times), every time for a relative one (the working
    directory may change)."""
    root = str(corpus.root)
    paths = _PATHS.get(root)
    if paths is None:
        paths = (os.path.abspath(root), os.path.abspath(corpus.root / MANIFEST),
                 os.path.abspath(corpus.table_path("papers")))
        if corpus.root.is_absolute():
            _PATHS[root] = paths
    return paths


def corpus_root(corpus: Corpus) -> str:
    """The corpus root's absolute path, as the per-build caches key it."""
    return _paths(corpus)[0]


def current_build(corpus: Corpus) -> str:
    """The build id the manifest names (:class:`CorpusError` when there is none); the
    manifest is read again only when its file changed (an ingest replaces it)."""
    _, path, papers_path = _paths(corpus)
    try:
        stat = os.stat(path)
        papers = os.stat(papers_path)  # swapped in just after the manifest
    except (FileNotFoundError, NotADirectoryError):
        return corpus.check()["build"]["id"]  # raises, naming what is missing
    stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_size, papers.st_ino, papers.st_mtime_ns)
    cached = _BUILDS.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    build = corpus.manifest().get("build", {}).get("id")
    if build is None:
        build = corpus.check()["build"]["id"]
    _BUILDS[path] = (stamp, build)
    return build


def _key(corpus: Corpus, table: str, load: Callable[[BinaryIO], T]) -> tuple[str, str, str]:
    return corpus_root(corpus), table, f"{load.__module__}.{load.__qualname__}"


def is_loaded(corpus: Corpus, table: str, load: Callable[[BinaryIO], T]) -> bool:
    """Whether ``per_build(corpus, table, load)`` would answer without loading anything."""
    try:
        build = current_build(corpus)
    except CorpusError:
        return False
    cached = _CACHE.get(_key(corpus, table, load))
    return cached is not None and cached[0] == build


def per_build(corpus: Corpus, table: str, load: Callable[[BinaryIO], T]) -> T:
    """``load(table file)`` for the corpus's current build, computed once per build."""
    build = current_build(corpus)
    key = _key(corpus, table, load)
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
