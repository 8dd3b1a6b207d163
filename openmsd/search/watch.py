"""What is new for a library: the papers that entered the corpus since the previous watch of
the same seeds (or since a date), ranked for the whole library as ``related --seeds`` ranks
(:func:`openmsd.search.library.related_to_library`, restricted to the new papers).

The corpus keeps, under ``watch/``:

* ``arrivals.parquet``: when each paper entered the corpus (``paper_id``, ``arrived``, UTC).
  A watch adds the papers it has not seen yet, with the time of the build that holds them
  (the build's ``papers.parquet`` was written then).
* ``<name>.json``: one file per seed set (``name``: a digest of its positive and negative
  paper ids): when it was last watched, and the window that watch reported.

Both are written atomically (a temporary file renamed), under a lock.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from filelock import FileLock

from openmsd.corpus import WATCH, Corpus
from openmsd.index import VectorIndex, load_index
from openmsd.io import atomic_path, write_json
from openmsd.rank import without_vectors
from openmsd.search.library import LibraryResult, related_to_library
from openmsd.search.related import Results

__all__ = ["WATCH_DIR", "Watch", "arrivals", "record_watch", "seed_set_name", "stored_watches",
           "watch_library", "watch_state"]

WATCH_DIR = WATCH
ARRIVALS = "arrivals.parquet"
_SCHEMA = pa.schema([("paper_id", pa.string()), ("arrived", pa.timestamp("us", tz="UTC"))])


@dataclass
class Watch:
    """What a watch of one seed set found: the papers new since ``since`` (None: every
    paper, a first watch), the first ``k`` of them ranked for the library, the new papers
    that have no vector to rank them by (``unranked``), and the new records that are not
    papers left out above the last result, by kind (``left_out``)."""

    name: str
    positive: list[str]
    negative: list[str]
    model: str
    since: datetime | None
    watched: datetime
    new: int
    results: list[LibraryResult] = field(default_factory=list)
    arrived: dict[str, datetime] = field(default_factory=dict)
    unranked: list[str] = field(default_factory=list)
    left_out: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "positive": self.positive, "negative": self.negative,
                "model": self.model, "since": self.since.isoformat() if self.since else None,
                "watched": self.watched.isoformat(), "new": self.new,
                "unranked": self.unranked, "left_out": self.left_out,
                "results": [{**r.as_dict(), "arrived": self.arrived[r.paper_id].isoformat()}
                            for r in self.results]}


def seed_set_name(positive: list[str], negative: list[str]) -> str:
    """The name of a seed set's watch state: a digest of its sorted paper ids.

    >>> seed_set_name(["b", "a"], []) == seed_set_name(["a", "b"], [])
    True
    """
    text = "\n".join(sorted(set(positive))) + "\n--\n" + "\n".join(sorted(set(negative)))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _dir(corpus: Corpus) -> Path:
    return corpus.layout.watch


def _build_time(corpus: Corpus) -> datetime:
    """When the corpus's current build was written (its papers table's time)."""
    stamp = corpus.table_path("papers").stat().st_mtime
    return datetime.fromtimestamp(stamp, UTC)


def arrivals(corpus: Corpus, record: bool = True) -> pa.Table:
    """``paper_id``, ``arrived`` (UTC): when each paper of the corpus entered it; papers not
    yet recorded get the current build's time (and, with ``record``, are recorded in
    ``watch/arrivals.parquet``)."""
    papers = corpus.read("papers", ["paper_id"])
    path = _dir(corpus) / ARRIVALS
    known = pq.read_table(path, schema=_SCHEMA) if path.exists() else _SCHEMA.empty_table()
    table = papers.join(known, "paper_id", join_type="left outer").select(["paper_id",
                                                                           "arrived"])
    if table["arrived"].null_count:
        built = pa.scalar(_build_time(corpus), _SCHEMA.field("arrived").type)
        table = table.set_column(1, "arrived", pc.fill_null(table["arrived"], built))
        if record:
            _write_arrivals(corpus, table)
    return table


def _write_arrivals(corpus: Corpus, table: pa.Table) -> None:
    """Add the papers of ``table`` the record does not hold yet (another watch's record
    stands), atomically, under a lock."""
    path = _dir(corpus) / ARRIVALS
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        known = pq.read_table(path, schema=_SCHEMA) if path.exists() else _SCHEMA.empty_table()
        added = table.filter(pc.invert(pc.is_in(table["paper_id"], known["paper_id"])))
        with atomic_path(path) as tmp:
            pq.write_table(pa.concat_tables([known, added.cast(_SCHEMA)]), tmp)


def watch_state(corpus: Corpus, name: str) -> dict[str, Any] | None:
    """The stored state of seed set ``name`` (None: never watched)."""
    path = _dir(corpus) / f"{name}.json"
    return orjson.loads(path.read_bytes()) if path.exists() else None


def stored_watches(corpus: Corpus) -> list[dict[str, Any]]:
    """Every stored seed set's state, the most recently watched first."""
    folder = _dir(corpus)
    states = [orjson.loads(p.read_bytes()) for p in sorted(folder.glob("*.json"))] \
        if folder.is_dir() else []
    return sorted(states, key=lambda s: s.get("watched", ""), reverse=True)


def watch_library(corpus: Corpus, positive: list[str], negative: list[str], model: str, k: int = 50,
          since: datetime | None = None, index: VectorIndex | None = None,
          record: bool = True, now: datetime | None = None,
          include_non_papers: bool = False) -> Watch:
    """The papers new for the library ``positive`` (away from ``negative``; corpus paper
    ids) since ``since``, else since the previous watch of these seeds (every paper on the
    first), the first ``k`` ranked by ``model``'s index; records that are not papers are
    left out and counted unless ``include_non_papers``. With ``record`` the watch is stored:
    the next one starts from now (else :func:`record_watch` stores it)."""
    name = seed_set_name(positive, negative)
    state = watch_state(corpus, name)
    now = now or datetime.now(UTC)
    start = since
    if start is None and state is not None:
        start = datetime.fromisoformat(state["watched"])
    arrived = arrivals(corpus, record)
    keep = pc.invert(pc.is_in(arrived["paper_id"], pa.array([*positive, *negative],
                                                            pa.string())))
    if start is not None:
        keep = pc.and_(keep, pc.greater(arrived["arrived"],
                                        pa.scalar(start, _SCHEMA.field("arrived").type)))
    new = arrived.filter(keep)["paper_id"].to_pylist()
    index = index or load_index(corpus, model)
    results = (related_to_library(corpus, positive, model, negative, k, index=index, among=new,
                                  include_non_papers=include_non_papers)
               if new else Results())
    listed = arrived.filter(pc.is_in(arrived["paper_id"],
                                     pa.array([r.paper_id for r in results], pa.string())))
    found = Watch(name, list(positive), list(negative), model, start, now, len(new), results,
                  dict(zip(listed["paper_id"].to_pylist(), listed["arrived"].to_pylist(),
                           strict=True)),
                  without_vectors(index, new), results.left_out)
    if record:
        record_watch(corpus, found)
    return found


def record_watch(corpus: Corpus, found: Watch) -> None:
    """Store ``found`` as its seed set's last watch (the next starts from its time), and the
    arrival of every paper it saw."""
    arrivals(corpus, record=True)
    write_json(_dir(corpus) / f"{found.name}.json", {
        "name": found.name, "positive": found.positive, "negative": found.negative,
        "model": found.model, "watched": found.watched.isoformat(),
        "window_start": found.since.isoformat() if found.since else None, "new": found.new})
