"""``openmsd fetch openalex``: from seeds to OpenAlex works JSONL, breadth first, resumable.

The crawl runs a queue of tasks: a seed (``/works/{key}``, free, or a title looked up by
search), a search, a filter, a batch of referenced works or the works citing a batch
(``filter=cites:W1|W2...``), each paged with cursors. A work found at depth ``d < depth``
queues its references (and, with ``citing``, its citers) at depth ``d + 1``; the crawl stops
at ``max_works``.

OpenAlex bills list calls and lets singletons go free: a batch of up to 100 referenced works
is one OR-filter call (``filter=openalex_id:W1|...|W100``, $0.0001), a batch of fewer than
:data:`SINGLETONS_BELOW` ids, or any batch once the budget or ``--max-cost`` cannot pay a list
call, is fetched as free singletons. A spent budget, ``--max-cost``, a network failure or a
refused key stop the crawl with its progress kept.

Works are appended to ``OUT.partial`` (JSON Lines) and the queue, with the cursor of the task
under way, to ``OUT.progress.json`` after every page. A fetch killed midway, run again with the
same arguments, reads both and goes on: a work already written is never written twice. At the
end the works are gzipped to ``OUT`` (atomically), both files are removed, and ``OUT`` gets a
sidecar ``OUT.fetch.json`` (the plan, the report, when it finished) for ``openmsd update``.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from openmsd.fetch.errors import PlanRequired, QueryTooLong
from openmsd.fetch.ids import work_id
from openmsd.fetch.openalex import OpenAlex, fit_search
from openmsd.fetch.seeds import Seed
from openmsd.fetch.session import BadAnswer, FetchError
from openmsd.io import atomic_path, refusal

__all__ = ["BATCH", "PER_PAGE", "SINGLETONS_BELOW", "FetchPlan", "FetchReport", "check_out",
           "crawl", "iter_works", "sidecar_path"]

BATCH = 100  # ids per OR-filter request (OpenAlex's most OR-ed values, and its largest page)
PER_PAGE = 100  # OpenAlex's per_page range is 1-100 (developers.openalex.org, paging)
SINGLETONS_BELOW = 3  # a batch of fewer ids goes as free singletons
SAVE_EVERY = 25  # singletons fetched between two saves of the progress file
STATE_VERSION = 1


@dataclass
class FetchPlan:
    """What to fetch: seeds, a search, filters (``{"language": "fr"}``), how far to go.

    ``since`` (YYYY-MM-DD) keeps the works updated since then: lists are filtered with
    ``from_updated_date`` (a paid-plan filter) unless ``published_since`` is set, when they
    are filtered with the free ``from_publication_date`` instead and ``since`` only decides
    which seeds (read one by one, free) are written. ``cites`` are work ids whose citers are
    looked for (``filter=cites:...``), without expanding further. ``include_xpac`` asks for
    the works OpenAlex keeps outside its core (repositories, DataCite: theses, preprints,
    datasets, many not in English)."""

    seeds: list[Seed] = field(default_factory=list)
    search: str | None = None
    filters: dict[str, str] = field(default_factory=dict)
    citing: bool = False
    depth: int = 1
    max_works: int = 10_000
    since: str | None = None
    per_page: int = PER_PAGE
    published_since: str | None = None
    cites: list[str] = field(default_factory=list)
    include_xpac: bool = True

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "seeds": [asdict(s) for s in self.seeds]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FetchPlan:
        return cls(**{**data, "seeds": [Seed(**s) for s in data.get("seeds", [])]})


@dataclass
class FetchReport:
    """What a fetch did: works written, requests, seeds that resolved to nothing, merged ids."""

    works: int = 0
    requests: int = 0
    seconds: float = 0.0
    unresolved: list[dict[str, str]] = field(default_factory=list)
    merged: dict[str, str] = field(default_factory=dict)
    skipped_not_updated: int = 0
    skipped_known: int = 0
    xpac_works: int = 0
    stopped_at_max_works: bool = False
    resumed: bool = False
    out: str = ""
    cost_usd: float = 0.0
    billed_calls: int = 0
    budget_limit_usd: float | None = None
    budget_remaining_usd: float | None = None


def sidecar_path(out: Path) -> Path:
    """Where a finished fetch records its plan and report: ``OUT.fetch.json``."""
    return out.with_name(out.name + ".fetch.json")


def check_out(out: Path) -> None:
    """Refuse an output path that cannot be written, before anything runs: a folder, a path
    under a file, a folder that cannot be written."""
    if out.is_dir():
        raise FetchError(f"--out {out}: is a folder; expected a file name like works.jsonl.gz")
    parent = out.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if parent.exists() and not parent.is_dir():
        raise FetchError(f"--out {out}: {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise FetchError(f"--out {out}: cannot write in {parent}")
    try:  # what the permission bits do not say: a read-only mount, a file system refusing
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out.parent):
            pass
    except OSError as error:
        raise FetchError(f"--out {out}: cannot write in {out.parent} "
                         f"({error.strerror or error})") from None


def _initial_tasks(plan: FetchPlan) -> list[dict[str, Any]]:
    tasks: list[dict[str, Any]] = [{"kind": "seed", "seed": asdict(s), "depth": 0}
                                   for s in plan.seeds]
    if plan.search:
        tasks.append({"kind": "search", "search": plan.search, "depth": 0})
    if plan.filters:
        tasks.append({"kind": "filter", "depth": 0})
    for start in range(0, len(plan.cites), BATCH):  # citers of these: not expanded further
        tasks.append({"kind": "cites", "ids": plan.cites[start:start + BATCH],
                      "depth": plan.depth})
    return tasks


class _State:
    """The queue, the ids seen, the report: saved to the progress file after every page."""

    def __init__(self, plan: FetchPlan, path: Path, partial: Path):
        self.plan, self.path, self.partial = plan, path, partial
        self.queue: list[dict[str, Any]] = []
        self.seen: set[str] = set()
        self.expanded: set[str] = set()
        self.written: set[str] = set()
        self.report = FetchReport()

    def start(self) -> None:
        """Resume from the progress file, or start afresh."""
        if self.path.exists():
            try:
                data = orjson.loads(self.path.read_bytes())
                if data.get("version") != STATE_VERSION:
                    raise ValueError(f"version {data.get('version')}")
            except (ValueError, OSError) as error:
                raise FetchError(f"{self.path}: unreadable progress file ({error}); delete it "
                                 "to start the fetch afresh") from None
            if data["plan"] != self.plan.as_dict():
                raise FetchError(f"{self.path}: the progress of a different fetch (other "
                                 "seeds or options); finish it with its own arguments, or "
                                 "delete it to start afresh")
            self.queue, self.seen = data["queue"], set(data["seen"])
            self.expanded = set(data["expanded"])
            self.report = FetchReport(**data["report"])
            self.report.resumed = True
            self.written = _written_ids(self.partial)
        else:
            self.queue = _initial_tasks(self.plan)
            self.partial.write_bytes(b"")
        self.save()

    def save(self) -> None:
        self.report.works = len(self.written)
        data = {"version": STATE_VERSION, "plan": self.plan.as_dict(), "queue": self.queue,
                "seen": sorted(self.seen), "expanded": sorted(self.expanded),
                "report": asdict(self.report)}
        with atomic_path(self.path) as tmp:
            tmp.write_bytes(orjson.dumps(data))


def _written_ids(partial: Path) -> set[str]:
    """The work ids of the complete lines of ``partial``; a torn last line is cut off."""
    ids: set[str] = set()
    if not partial.exists():
        return ids
    with open(partial, "rb+") as handle:
        good = 0
        for line in handle:
            if not line.endswith(b"\n"):
                break
            with contextlib.suppress(orjson.JSONDecodeError):
                if wid := work_id(orjson.loads(line).get("id")):
                    ids.add(wid)
            good += len(line)
        handle.truncate(good)
    return ids


class _Crawl:
    """Runs the queue of a :class:`_State` against a client, task by task, page by page."""

    def __init__(self, client: OpenAlex, state: _State,
                 tick: Callable[[int], None] | None, known: frozenset[str] = frozenset()):
        self.client, self.state, self.plan, self.tick = client, state, state.plan, tick
        self.known = known

    def full(self) -> bool:
        return len(self.state.written) >= self.plan.max_works

    def run(self) -> None:
        queue = self.state.queue
        while queue and not self.full():
            task = queue[0]
            if task["kind"] == "seed":
                self.seed(task)
            elif task["kind"] == "ids" and self.as_singletons(task):
                self.singletons(task)
            else:
                self.paged(task)
            queue.pop(0)
            self.state.save()
        self.state.report.stopped_at_max_works = bool(queue) and self.full()

    def seed(self, task: dict[str, Any]) -> None:
        seed = Seed(**task["seed"])
        try:
            if seed.key:
                work = self.client.work(seed.key)
            else:
                title, _ = fit_search(seed.title)
                query = self.client.works(self.plan.include_xpac).search_filter(title=title)
                found = self.client.page(query, per_page=1)
                work = found[0] if found else None
        except BadAnswer as error:
            self.unresolved(seed, f"bad answer: {error}")
            return
        if work is None or not work_id(work.get("id")):
            self.unresolved(seed, "not found in OpenAlex" if work is None else "no work id")
            return
        wid = work_id(work["id"])
        if seed.key and seed.key.startswith("W") and wid != seed.key:
            self.state.report.merged[seed.key] = wid  # merged id, redirected
        self.emit([work], task["depth"], seed=True)

    def unresolved(self, seed: Seed, reason: str) -> None:
        self.state.report.unresolved.append({"seed": seed.name, "origin": seed.origin,
                                             "reason": reason})

    def query(self, task: dict[str, Any]) -> Any:
        kind = task["kind"]
        filters: dict[str, Any] = {}
        query = self.client.works(self.plan.include_xpac)
        if kind == "search":
            query = query.search(fit_search(task["search"])[0])
        elif kind == "filter":
            filters.update(self.plan.filters)
        elif kind == "ids":
            filters["openalex_id"] = "|".join(task["ids"])
        elif kind == "cites":
            filters["cites"] = "|".join(task["ids"])
        if kind == "search" and self.plan.filters:
            filters.update(self.plan.filters)
        if self.plan.published_since:
            if kind in ("search", "filter", "cites"):
                filters["from_publication_date"] = self.plan.published_since
        elif self.plan.since:
            filters["from_updated_date"] = self.plan.since
        return query.filter(**filters) if filters else query

    def as_singletons(self, task: dict[str, Any]) -> bool:
        """Whether the ids of ``task`` go as free singletons: few of them, already begun so,
        or no budget left for the OR-filter call."""
        if "next" in task or len(task["ids"]) < SINGLETONS_BELOW:
            return True
        return task.get("cursor", "*") == "*" and not self.client.affords(self.query(task))

    def singletons(self, task: dict[str, Any]) -> None:
        """Fetch the ids of ``task`` one by one (``/works/W...``, free); one not found is
        skipped, as the OR-filter would skip it."""
        ids = task["ids"]
        start = task.setdefault("next", 0)
        for number in range(start, len(ids)):
            if self.full():
                return
            try:
                work = self.client.work(ids[number])
            except BadAnswer:
                work = None  # a reference that cannot be read is left out, as a filter would
            if work is not None and work_id(work.get("id")):
                self.emit([work], task["depth"])
            task["next"] = number + 1
            if task["next"] % SAVE_EVERY == 0:
                self.state.save()

    def paged(self, task: dict[str, Any]) -> None:
        per_page = min(BATCH, self.plan.per_page) if task["kind"] == "ids" else \
            self.plan.per_page
        cursor = task.get("cursor", "*")
        while cursor and not self.full():
            page = self.client.page(self.query(task), cursor, per_page)
            self.emit(list(page), task["depth"])
            # a short page is the last: no need to ask for the empty one after it
            cursor = page.next_cursor if len(page) == per_page else None
            task["cursor"] = cursor
            self.state.save()

    def emit(self, works: list[dict[str, Any]], depth: int, seed: bool = False) -> None:
        """Append the new works, queue the expansion of every work at ``depth``."""
        state = self.state
        lines = []
        for work in works:
            wid = work_id(work.get("id"))
            if not wid or wid in state.written or self.full():
                continue
            if seed and self.plan.since and str(work.get("updated_date", ""))[:10] \
                    < self.plan.since:
                state.report.skipped_not_updated += 1
            elif not seed and wid in self.known:
                state.report.skipped_known += 1  # already in the corpus being updated
            else:
                lines.append(orjson.dumps(work) + b"\n")
                state.written.add(wid)
                state.report.xpac_works += work.get("is_xpac") is True
            state.seen.add(wid)
        if lines:
            try:
                with open(state.partial, "ab") as handle:
                    handle.writelines(lines)
                    handle.flush()
                    os.fsync(handle.fileno())
            except OSError as error:  # a torn last line is cut off on resuming
                state.written.difference_update(work_id(orjson.loads(line)["id"])
                                                for line in lines)
                raise OSError(error.errno, error.strerror, str(state.partial)) from error
            if self.tick:
                self.tick(len(lines))
        if depth >= self.plan.depth:
            return
        refs: list[str] = []
        citers: list[str] = []
        for work in works:
            wid = work_id(work.get("id"))
            if not wid or wid in state.expanded:
                continue
            state.expanded.add(wid)
            citers.append(wid)
            for ref in work.get("referenced_works") or []:
                rid = work_id(ref)
                if rid and rid not in state.seen:
                    state.seen.add(rid)
                    refs.append(rid)
        self.enqueue("ids", refs, depth + 1)
        if self.plan.citing:
            self.enqueue("cites", citers, depth + 1)

    def enqueue(self, kind: str, ids: list[str], depth: int) -> None:
        """Queue ``ids`` in batches of :data:`BATCH`, first filling the last batch of the same
        kind and depth that has not started (fewer, fuller calls: each costs the same)."""
        queue = self.state.queue
        open_ = next((t for t in reversed(queue[1:]) if t["kind"] == kind
                      and t["depth"] == depth and "cursor" not in t and "next" not in t), None)
        if open_ is not None and len(open_["ids"]) < BATCH:
            room = BATCH - len(open_["ids"])
            open_["ids"].extend(ids[:room])
            ids = ids[room:]
        for start in range(0, len(ids), BATCH):
            queue.append({"kind": kind, "ids": ids[start:start + BATCH], "depth": depth})


def check_plan(plan: FetchPlan) -> None:
    """Refuse a plan that cannot run (one line naming the option)."""
    if plan.depth < 0:
        raise FetchError(f"--depth {plan.depth}: expected 0 or more")
    if plan.max_works <= 0:
        raise FetchError(f"--max-works {plan.max_works}: expected 1 or more")
    if not 1 <= plan.per_page <= PER_PAGE:
        raise FetchError(f"per_page {plan.per_page}: expected 1 to {PER_PAGE}")
    if not (plan.seeds or plan.search or plan.filters or plan.cites):
        raise FetchError("nothing to fetch: give seeds, --search or --filter")


def crawl(client: OpenAlex, plan: FetchPlan, out: Path,
          tick: Callable[[int], None] | None = None, known: frozenset[str] = frozenset(),
          extra: dict[str, Any] | None = None) -> FetchReport:
    """Fetch ``plan`` from ``client`` into ``out`` (OpenAlex works JSONL, gzipped when the
    name ends in ``.gz``), resuming from ``OUT.progress.json`` when there is one. Works whose
    id is in ``known`` are not written (seeds excepted); ``extra`` goes into the sidecar.

    A crawl that cannot go on (spent budget, ``--max-cost``, network failure, refused key)
    raises :class:`FetchError` with its progress kept and saying so; one whose seeds all
    resolved to nothing raises it too, and writes no output. A request the API refuses for
    good (:class:`PlanRequired`, :class:`QueryTooLong`) raises it without asking for a run
    again, its progress files removed when nothing was written."""
    check_plan(plan)
    check_out(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    state = _State(plan, out.with_name(out.name + ".progress.json"), partial)
    state.start()
    requests_before = client.requests
    spent_before, billed_before = client.budget.spent_usd, client.budget.billed_calls
    began = time.perf_counter()
    refused: FetchError | None = None
    try:
        _Crawl(client, state, tick, known).run()
    except (PlanRequired, QueryTooLong) as error:
        refused = error
    except FetchError as error:
        raise type(error)(f"{error} (progress kept: {len(state.written):,} works so far in "
                          f"{partial}; run the same command again to go on)") from None
    except OSError as error:
        refused = refusal(error)
        if refused is None:
            raise
        raise FetchError(f"{refused} (progress kept: {len(state.written):,} works so far in "
                         f"{partial}; run the same command again to go on)") from None
    finally:
        report = state.report
        report.requests += client.requests - requests_before
        report.seconds = round(report.seconds + time.perf_counter() - began, 3)
        report.cost_usd = round(report.cost_usd + client.budget.spent_usd - spent_before, 6)
        report.billed_calls += client.budget.billed_calls - billed_before
        report.budget_limit_usd = client.budget.limit_usd
        report.budget_remaining_usd = client.budget.left()
        state.save()
    if refused is not None:
        raise type(refused)(_refused_line(refused, state, partial)) from None
    report.works, report.out = len(state.written), str(out)
    if plan.seeds and not (plan.search or plan.filters or plan.cites) and \
            len(report.unresolved) >= len(plan.seeds):
        partial.unlink(missing_ok=True)
        state.path.unlink(missing_ok=True)
        reasons = "; ".join(f"{u['seed']}: {u['reason']}" for u in report.unresolved[:3])
        more = f" (and {len(report.unresolved) - 3:,} more)" if len(report.unresolved) > 3 \
            else ""
        raise FetchError(f"no seed resolved (of {len(plan.seeds):,}), nothing written to "
                         f"{out}: {reasons}{more}")
    _finish(partial, out)
    state.path.unlink()
    sidecar = {"plan": plan.as_dict(), "api_url": client.api_url,
               "finished": datetime.now(UTC).strftime("%Y-%m-%d"), "report": asdict(report),
               **(extra or {})}
    with atomic_path(sidecar_path(out)) as tmp:
        tmp.write_bytes(orjson.dumps(sidecar, option=orjson.OPT_INDENT_2))
    return report


def _refused_line(error: FetchError, state: _State, partial: Path) -> str:
    """One line for a request refused for good: no "run again"; the progress files are
    removed when they hold nothing, kept (and named) otherwise."""
    why = ("OpenAlex keeps it for paid plans" if isinstance(error, PlanRequired)
           else "OpenAlex refuses it at that length")
    if not state.written:
        partial.unlink(missing_ok=True)
        state.path.unlink(missing_ok=True)
        return f"{error} ({why}: running the same command again cannot help; nothing written)"
    return (f"{error} ({why}: running the same command again cannot help; "
            f"{len(state.written):,} works fetched before it kept in {partial})")


def _finish(partial: Path, out: Path) -> None:
    """Move the works of ``partial`` to ``out`` atomically (gzipped for ``.gz``)."""
    with atomic_path(out) as tmp:
        try:
            with open(partial, "rb") as source, _opener(out)(tmp) as target:
                shutil.copyfileobj(source, target, 1 << 20)
        except OSError as error:  # gzip's errors name no file
            raise OSError(error.errno, error.strerror, str(out)) from error
    partial.unlink()


def _opener(out: Path) -> Callable[[Path], Any]:
    if out.name.endswith(".gz"):
        return lambda path: gzip.open(path, "wb", compresslevel=6)
    return lambda path: open(path, "wb")


def iter_works(path: Path) -> Iterator[dict[str, Any]]:
    """The works of a fetch output (for tests and ``update``)."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as handle:
        for line in handle:
            if line.strip():
                yield orjson.loads(line)
