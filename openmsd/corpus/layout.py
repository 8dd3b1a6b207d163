"""The corpus directory's layout: where every file of a corpus lives, the lock its writers
hold, and the life of what is built beside the tables (vectors, indexes, the tuned ranker).

``CORPUS/``::

    manifest.json               schema version, the inputs in ingest order, the build id, counts
    papers.parquet ...          the tables (schema.TABLES), one Parquet file each
    ingest_report.json          counts and problems by reason; problems.jsonl lists every problem
    .ingest.lock                held by the one writer (ingest, embed, index build) at work
    staged/NNNN-DIGEST/         what one input contributed (staged_{papers,...}.parquet), or,
                                its files read in parallel, one folder per file (from-SEQ/)
    .build-*/                   a table build not yet swapped in
    summaries/METHODLENGTH/     English summaries (part-NNNNN.parquet)
    relations/                  the relations tables, relations.json
    watch/                      what each library was last shown (``openmsd watch``)
    adapters/NAME/              trained adapters (adapter.json)
    vectors/KEY/                a model's paper vectors (part-NNNNN.parquet)
    index/KEY                   a model's index: a link to index/.builds/KEY/BUILD/
    index/ranker.json           the trained rankers (``openmsd train ranker``)
    index/.related/KEY.parquet  the stored related lists of a ranker

``KEY`` is a model's directory name (:func:`openmsd.vectors.model_slug` of its vector key):
this module knows where keys live, not how models are named.

>>> layout = Layout("corpus")
>>> str(layout.ranker), str(layout.vector_dir("e5@onnx")), str(layout.related_file("hybrid"))
('corpus/index/ranker.json', 'corpus/vectors/e5@onnx', 'corpus/index/.related/hybrid.parquet')
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock, Timeout

from openmsd.report import IngestError

__all__ = ["ADAPTERS", "INDEX", "INDEX_BUILDS", "LOCK", "MANIFEST", "NEXT", "PARTS",
           "PROBLEMS", "RANKER_FILE", "RELATED", "RELATIONS", "RELATIONS_MANIFEST", "REPORT",
           "STAGED_DIR", "SUMMARIES", "VECTORS", "WATCH", "Layout", "corpus_lock",
           "staged_files", "staged_subdir"]

MANIFEST = "manifest.json"
NEXT = "next"  # the manifest an ingest is about to commit (see Corpus.manifest)
REPORT = "ingest_report.json"
PROBLEMS = "problems.jsonl"
LOCK = ".ingest.lock"
STAGED_DIR = "staged"
TABLE_BUILDS = ".build-*"
SUMMARIES = "summaries"
RELATIONS = "relations"
RELATIONS_MANIFEST = "relations.json"
WATCH = "watch"
ADAPTERS = "adapters"
VECTORS = "vectors"
INDEX = "index"
INDEX_BUILDS = ".builds"
RANKER_FILE = "ranker.json"
RELATED = ".related"
PARTS = "part-*.parquet"
"""The parts of a vectors or summaries directory, each written whole."""


@dataclass(frozen=True)
class Layout:
    """The paths of one corpus directory ``root``; nothing is read or made by naming them."""

    root: Path

    def __init__(self, root: str | Path):
        object.__setattr__(self, "root", Path(root))

    def table(self, name: str) -> Path:
        """A table's Parquet file (``papers`` -> ``papers.parquet``)."""
        return self.root / f"{name}.parquet"

    @property
    def manifest(self) -> Path:
        return self.root / MANIFEST

    @property
    def report(self) -> Path:
        return self.root / REPORT

    @property
    def problems(self) -> Path:
        return self.root / PROBLEMS

    @property
    def lock(self) -> Path:
        return self.root / LOCK

    @property
    def staged(self) -> Path:
        return self.root / STAGED_DIR

    @property
    def summaries(self) -> Path:
        return self.root / SUMMARIES

    @property
    def relations(self) -> Path:
        return self.root / RELATIONS

    @property
    def relations_manifest(self) -> Path:
        return self.relations / RELATIONS_MANIFEST

    @property
    def watch(self) -> Path:
        return self.root / WATCH

    @property
    def adapters(self) -> Path:
        return self.root / ADAPTERS

    @property
    def vectors(self) -> Path:
        return self.root / VECTORS

    @property
    def index(self) -> Path:
        return self.root / INDEX

    @property
    def index_builds(self) -> Path:
        return self.index / INDEX_BUILDS

    @property
    def ranker(self) -> Path:
        return self.index / RANKER_FILE

    @property
    def related(self) -> Path:
        return self.index / RELATED

    def vector_dir(self, key: str) -> Path:
        """The vectors of the model stored under ``key``."""
        return self.vectors / key

    def index_dir(self, key: str) -> Path:
        """The index (a link to its current build) of the model stored under ``key``."""
        return self.index / key

    def related_file(self, key: str) -> Path:
        """The stored related lists of the ranker stored under ``key``."""
        return self.related / f"{key}.parquet"

    def vector_parts(self, key: str, newest_first: bool = False) -> list[Path]:
        """The Parquet parts of ``key``'s vectors in the order they were written (the
        newest first when ``newest_first``); [] when there are none."""
        return sorted(self.vector_dir(key).glob(PARTS), reverse=newest_first)

    def stored_keys(self) -> list[str]:
        """The keys with stored vectors or an index, the most recently built first
        (``index/.builds`` and ``index/.related`` name no model)."""
        found: dict[str, float] = {}
        for folder, marker in ((self.vectors, PARTS), (self.index, "*")):
            if not folder.is_dir():
                continue
            for directory in folder.iterdir():
                if directory.name.startswith("."):
                    continue
                files = list(directory.glob(marker)) if directory.is_dir() else []
                if files:
                    stamp = max(f.stat().st_mtime for f in files)
                    found[directory.name] = max(found.get(directory.name, 0.0), stamp)
        return sorted(found, key=lambda m: -found[m])

    def remove_unfinished_index_builds(self) -> None:
        """Remove what killed index builds left: builds never finished (no
        ``papers.parquet``) and links never renamed into place. Call it under the lock."""
        for unfinished in self.index_builds.glob("*/*"):
            if unfinished.is_dir() and not (unfinished / "papers.parquet").exists():
                shutil.rmtree(unfinished, ignore_errors=True)
        for link in self.index.glob(".*.link"):
            link.unlink(missing_ok=True)

    def remove_stale_staged(self, known: set[str]) -> None:
        """Remove what a killed ingest left: staged parts the manifest does not name
        (``known``) and table builds never swapped in. Call it under the lock."""
        for orphan in self.staged.iterdir():
            if orphan.name not in known:
                shutil.rmtree(orphan) if orphan.is_dir() else orphan.unlink()
        for leftover in self.root.glob(TABLE_BUILDS):
            shutil.rmtree(leftover, ignore_errors=True)


_FROM = "from-"


def staged_subdir(first_seq: int) -> str:
    """The folder, in a staged part, of the staged files of one of its input's files, whose
    records are numbered from ``first_seq`` on (each folder's ``seq`` starts at 0).

    >>> staged_subdir(1234)
    'from-000000001234'
    """
    return f"{_FROM}{first_seq:012d}"


def staged_files(part: Path, name: str) -> list[tuple[Path, int]]:
    """The staged files ``name`` (``staged_papers.parquet``, ...) of a staged ``part`` with the
    number to add to their ``seq``: the part's own file (0), or one per :func:`staged_subdir`,
    in ``seq`` order."""
    if (part / name).exists():
        return [(part / name, 0)]
    folders = sorted(part.glob(f"{_FROM}*"), key=lambda folder: folder.name)
    return [(folder / name, int(folder.name.removeprefix(_FROM))) for folder in folders]


def _corpus_root(out: str | Path) -> Path:
    """``out`` as a corpus directory, created if needed; IngestError when it cannot be one."""
    root = Path(out)
    if root.exists() and not root.is_dir():
        raise IngestError(f"{root}: a file, not a corpus directory: name a directory with --out")
    try:
        root.mkdir(parents=True, exist_ok=True)
        Layout(root).staged.mkdir(exist_ok=True)
    except OSError as error:
        raise IngestError(f"{root}: cannot create the corpus directory: "
                          f"{error.strerror or error}") from None
    return root


@contextlib.contextmanager
def corpus_lock(out: str | Path, create: bool = True) -> Iterator[Path]:
    """Hold the corpus directory ``out`` (created if needed when ``create``) for one writer
    (ingest, embed, an adapter's training, index build); IngestError at once when another
    process holds it. Reentrant within a process (one lock object per corpus)."""
    root = _corpus_root(out) if create else Path(out)
    path = Layout(root).lock
    lock = FileLock(path, timeout=0, is_singleton=True)
    try:
        lock.acquire()
    except Timeout:
        raise IngestError(f"{root}: another ingest, embed or index build is writing to this corpus "
                          f"(it holds {path}); wait for it to finish, then run "
                          "again") from None
    except OSError as error:
        raise IngestError(f"{root}: cannot lock the corpus directory: "
                          f"{error.strerror or error}") from None
    try:
        yield root
    finally:
        lock.release()
