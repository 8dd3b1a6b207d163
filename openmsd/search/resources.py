"""What search keeps in memory for one corpus: :class:`SearchResources`.

One object per corpus holds every structure search derives from it and reuses between
answers, each keyed by what it was computed from:

* tables read once per **corpus build** (``table(name, load)``: paper records, aliases, the
  citation graph). The open file's own build id (``openmsd.build`` in its metadata) must be
  the manifest's, so a structure is never built from a table of another build (a re-ingest
  renames new tables into place: the open file stays the one checked);
* rankers once per corpus build, **ranker spec** (``index/ranker.json``, what ``openmsd
  tune`` wrote) and ranker name, built again when the stored vectors of one of their dense
  members change (``openmsd embed``: the members that did not change are kept);
* anything else an answer derives from them (``kept(slot, stamp, make)``: the related lists,
  keyed by the build, the spec, the vectors and the **index build**; the title index).

A new corpus build empties it (:meth:`SearchResources.current`): nothing of the old build is
kept. Its lifetime is the caller's: a server holds one per corpus for as long as it serves, a
command one for its run (:func:`resources_of` gives the one of a :class:`~openmsd.corpus.Corpus`
object, made on first use, kept by the object and dropped with it).
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import pyarrow.parquet as pq

from openmsd.corpus import MANIFEST, Corpus, CorpusError
from openmsd.index import index_dir
from openmsd.rank import (
    DenseScorer,
    Papers,
    Scorer,
    corpus_papers,
    dense_members,
    load_scorer,
    ranker_path,
)
from openmsd.vectors import vectors_dir

__all__ = ["FileStamp", "SearchResources", "resources_of"]

T = TypeVar("T")
#: Where a corpus object keeps its search resources (``Corpus.kept``).
KEPT = "search"
#: A stored file's name, modification time and size.
FileStamp = tuple[str, int, int]


def files_stamp(directory: str | Path) -> tuple[FileStamp, ...]:
    """The Parquet files of ``directory``: names, times and sizes (empty when it is absent)."""
    try:
        files = sorted(os.scandir(directory), key=lambda f: f.name)
    except (FileNotFoundError, NotADirectoryError):
        return ()
    return tuple((f.name, f.stat().st_mtime_ns, f.stat().st_size) for f in files
                 if f.name.endswith(".parquet"))


def _stat(path: str) -> tuple[int, int, int] | None:
    try:
        stat = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return stat.st_ino, stat.st_mtime_ns, stat.st_size


@dataclass
class _Build:
    """What is kept for one corpus build."""

    build: str
    tables: dict[tuple[str, str], Any] = field(default_factory=dict)
    #: the stamp of the ranker spec file the scorers were built under
    spec: tuple[int, int, int] | None = None
    papers: Papers | None = None
    scorers: dict[str, Scorer] = field(default_factory=dict)
    kept: dict[Hashable, tuple[Hashable, Any]] = field(default_factory=dict)


class SearchResources:
    """The structures search keeps for one ``corpus`` (see the module)."""

    def __init__(self, corpus: Corpus):
        self.corpus = corpus
        self._paths: tuple[str, str, str] | None = None
        self._manifest: tuple[tuple[int, ...], str] | None = None
        self._now: _Build | None = None
        self._swap_lock = threading.Lock()
        self._tables_lock = threading.Lock()
        #: each dense scorer's stored vector files when it read them
        self._stamps: weakref.WeakKeyDictionary[DenseScorer, tuple[FileStamp, ...]] = (
            weakref.WeakKeyDictionary())
        self._vector_dirs: dict[str, str] = {}
        self._rankers_lock = threading.Lock()
        self._index_links: dict[str, str] = {}
        self._index_builds: dict[str, tuple[tuple[int, int, int], str]] = {}
        self._kept_lock = threading.Lock()

    @property
    def build(self) -> str | None:
        """The corpus build of what is kept now (None: nothing loaded yet)."""
        return self._now.build if self._now is not None else None

    # --- the corpus build ---------------------------------------------------------------

    def _corpus_paths(self) -> tuple[str, str, str]:
        """The corpus root's, manifest's and papers table's absolute paths; made once for an
        absolute root, every time for a relative one (the working directory may change)."""
        if self._paths is not None:
            return self._paths
        corpus = self.corpus
        paths = (os.path.abspath(corpus.root), os.path.abspath(corpus.root / MANIFEST),
                 os.path.abspath(corpus.table_path("papers")))
        if corpus.root.is_absolute():
            self._paths = paths
        return paths

    @property
    def root(self) -> str:
        """The corpus root's absolute path."""
        return self._corpus_paths()[0]

    def current_build(self) -> str:
        """The build id the manifest names (:class:`CorpusError` when there is none); the
        manifest is read again only when its file changed (an ingest replaces it)."""
        _, path, papers_path = self._corpus_paths()
        try:
            stat = os.stat(path)
            papers = os.stat(papers_path)  # swapped in just after the manifest
        except (FileNotFoundError, NotADirectoryError):
            return self.corpus.check()["build"]["id"]  # raises, naming what is missing
        stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_size, papers.st_ino, papers.st_mtime_ns)
        known = self._manifest
        if known is not None and known[0] == stamp:
            return known[1]
        build = self.corpus.manifest().get("build", {}).get("id")
        if build is None:
            build = self.corpus.check()["build"]["id"]
        self._manifest = (stamp, build)
        return build

    def _current(self) -> _Build:
        """What is kept for the current build: fresh (empty) for a build not seen before,
        and what was kept for the one before is dropped."""
        build = self.current_build()
        now = self._now
        if now is None or now.build != build:
            with self._swap_lock:
                now = self._now
                if now is None or now.build != build:
                    now = self._now = _Build(build)
        return now

    # --- tables of the build ------------------------------------------------------------

    @staticmethod
    def _slot(table: str, load: Callable[[BinaryIO], Any]) -> tuple[str, str]:
        return table, f"{load.__module__}.{load.__qualname__}"

    def has_table(self, table: str, load: Callable[[BinaryIO], Any]) -> bool:
        """Whether :meth:`table` would answer without loading anything."""
        try:
            build = self.current_build()
        except CorpusError:
            return False
        now = self._now
        return now is not None and now.build == build and self._slot(table, load) in now.tables

    def table(self, table: str, load: Callable[[BinaryIO], T]) -> T:
        """``load(table file)`` for the corpus's current build, computed once per build."""
        now = self._current()
        build = now.build
        slot = self._slot(table, load)
        with self._tables_lock:  # one load at a time; requests arriving meanwhile wait for it
            if slot in now.tables:
                return now.tables[slot]
            path = self.corpus.table_path(table)
            with open(path, "rb") as handle:
                found = (pq.read_schema(handle).metadata or {}).get(b"openmsd.build",
                                                                    b"").decode()
                if found != build:
                    raise CorpusError(f"{path}: from build {found!r}, the manifest names "
                                      f"{build!r} (an ingest in progress?); try again when it "
                                      "has finished")
                handle.seek(0)
                value = load(handle)
            now.tables[slot] = value
            return value

    # --- rankers ------------------------------------------------------------------------

    def _spec_stamp(self) -> tuple[int, int, int] | None:
        """The tuned ranker spec file's stamp (None: no file, untuned)."""
        return _stat(os.path.join(self.root, os.path.relpath(ranker_path(self.corpus),
                                                             self.corpus.root)))

    def papers(self) -> Papers:
        """Every paper of the current build, as the rankers read them."""
        now = self._current()
        with self._rankers_lock:
            if now.papers is None:
                now.papers = corpus_papers(self.corpus)
            return now.papers

    def scorer(self, name: str) -> Scorer:
        """The ranker ``name`` over all of the corpus's papers, built once per corpus build
        and ranker spec, and built again when the stored vectors of one of its dense members
        change (the members that did not change are kept)."""
        now = self._current()
        spec = self._spec_stamp()
        with self._rankers_lock:
            if spec != now.spec:  # 'openmsd train ranker' wrote another spec: every ranker anew
                now.scorers.clear()
                now.spec = spec
            known = now.scorers.get(name)
            if known is not None and self._fresh(known):
                return known
            if now.papers is None:
                now.papers = corpus_papers(self.corpus)
            for other in list(now.scorers):
                if not self._fresh(now.scorers[other]):
                    del now.scorers[other]  # vectors embedded since: this and its wholes
            # rankers of one build share their members (hybrid and hybrid-graph: one BM25)
            members = dict(now.scorers)
            known_ids = set(map(id, members.values()))
            stamps = self._vectors_stamps()  # taken before the vectors are read
            load_scorer(name, now.papers, cache=members)
            for scorer in members.values():
                if isinstance(scorer, DenseScorer) and id(scorer) not in known_ids:
                    self._stamps[scorer] = stamps.get(vectors_dir(self.corpus,
                                                                  scorer.name).name, ())
            now.scorers[name] = members[name]
            for member, scorer in members.items():
                now.scorers.setdefault(member, scorer)
            return now.scorers[name]

    def built_scorer(self, name: str) -> Scorer | None:
        """What :meth:`scorer` would answer at once (built for the current build and spec,
        its dense members' vectors unchanged), else None."""
        try:
            build = self.current_build()
        except CorpusError:
            return None
        now = self._now
        if now is None or build != now.build or self._spec_stamp() != now.spec:
            return None
        scorer = now.scorers.get(name)
        return scorer if scorer is not None and self._fresh(scorer) else None

    def vectors_stamp(self, model: str) -> tuple[FileStamp, ...]:
        """The stored vector files of ``model``: names, times and sizes."""
        directory = self._vector_dirs.get(model)
        if directory is None:
            directory = self._vector_dirs[model] = os.path.abspath(vectors_dir(self.corpus,
                                                                               model))
        return files_stamp(directory)

    def _vectors_stamps(self) -> dict[str, tuple[FileStamp, ...]]:
        """:meth:`vectors_stamp` of every model's vector directory, by directory name."""
        root = self.corpus.layout.vectors
        folders = [f for f in os.scandir(root) if f.is_dir()] if root.is_dir() else []
        return {f.name: files_stamp(Path(f.path)) for f in folders}

    def _fresh(self, scorer: Scorer) -> bool:
        """Whether every dense member of ``scorer`` holds the vectors stored now."""
        return all(self._stamps.get(d) == self.vectors_stamp(d.name)
                   for d in dense_members(scorer) if d.papers.corpus is not None)

    def index_build(self, model: str) -> str:
        """The name of the build ``model``'s index link points to (the last part of its real
        path; the link's own name when it is a directory or absent). Resolved again only when
        the link was replaced (``openmsd index build`` swaps in a new link: another inode),
        so an answer does not walk the path (~9 ``lstat``) each time."""
        path = self._index_links.get(model)
        if path is None:
            path = self._index_links[model] = os.path.join(self.root, os.path.relpath(
                index_dir(self.corpus, model), self.corpus.root))
        try:
            stat = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return os.path.basename(os.path.realpath(path))
        stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns)
        known = self._index_builds.get(path)
        if known is None or known[0] != stamp:
            known = self._index_builds[path] = (stamp, os.path.basename(os.path.realpath(path)))
        return known[1]

    # --- what answers derive from them ------------------------------------------------------

    def kept(self, slot: Hashable, stamp: Hashable, make: Callable[[], T]) -> T:
        """``make()``, kept under ``slot`` for the current build until ``stamp`` (what it was
        made from) changes."""
        now = self._current()
        known = now.kept.get(slot)
        if known is not None and known[0] == stamp:
            return known[1]
        with self._kept_lock:
            known = now.kept.get(slot)
            if known is None or known[0] != stamp:
                known = (stamp, make())
                now.kept[slot] = known
            return known[1]


_ATTACHING = threading.Lock()


def resources_of(corpus: Corpus) -> SearchResources:
    """The search resources of this corpus object (kept in ``corpus.kept``): made on first
    use, alive as long as the object (a server's corpus, a command's)."""
    found = corpus.kept.get(KEPT)
    if found is None:
        with _ATTACHING:
            found = corpus.kept.get(KEPT)
            if found is None:
                found = corpus.kept[KEPT] = SearchResources(corpus)
    return found
