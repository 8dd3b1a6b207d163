"""``openmsd update``: fetch what is new since a corpus's last fetch, ingest, embed, index, and
train its adapters and ranker again; then, optionally, watch a library."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer

from openmsd.cli.fetch import (
    check_timeout,
    fetch_progress,
    mailto_note,
    need_clients,
    print_report,
    ticker,
)
from openmsd.cli.options import JsonOpt
from openmsd.cli.output import emit, err, fail, out
from openmsd.cli.watch import WATCH_K, AtomOpt, HtmlOpt, check_outputs, run_watch

__all__ = ["app"]

OVERLAP_DAYS = 30  # an update's publication-date window starts this long before the last run

app = typer.Typer()


def _last_fetch(corpus: Path) -> tuple[Path, dict]:
    """The newest fetch sidecar among the inputs of ``corpus``'s manifest."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import MANIFEST, Layout
    from openmsd.fetch import FetchError, sidecar_path

    manifest = Layout(corpus).manifest
    if not manifest.exists():
        raise FetchError(f"{corpus}: not a corpus (no {MANIFEST}); ingest a fetch first")
    found = []
    for entry in orjson.loads(manifest.read_bytes()).get("inputs", []):
        sidecar = sidecar_path(Path(entry["path"]))
        if sidecar.exists():
            found.append((Path(entry["path"]), orjson.loads(sidecar.read_bytes())))
    if not found:
        raise FetchError(f"{corpus}: none of its inputs came from 'openmsd fetch openalex' "
                         "(no WORKS.fetch.json beside them)")
    return max(found, key=lambda item: item[1]["finished"])


def _corpus_works(corpus: Path) -> list[str]:
    """The OpenAlex work ids (``W...``) of the papers of ``corpus``, sorted."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import Corpus

    table = Corpus(corpus).read("papers", ["paper_id", "aliases"])
    ids = set()
    for key, aliases in zip(table["paper_id"].to_pylist(), table["aliases"].to_pylist(),
                            strict=True):
        for alias in [key, *(aliases or [])]:
            if alias and alias.startswith("openalex:W"):
                ids.add(alias.split(":", 1)[1])
    return sorted(ids, key=lambda w: (len(w), w))


def _update_target(previous: Path, plan_dict: dict[str, Any]) -> Path:
    """Where this update writes: the unfinished update beside ``previous`` with the same plan
    (it resumes), else a new ``WORKS.update-STAMP.jsonl.gz``; an unfinished update of another
    plan is removed (its works are fetched again by this one)."""
    prefix = previous.name.split(".")[0]
    for progress in sorted(previous.parent.glob(f"{prefix}.update-*.jsonl.gz.progress.json")):
        target = progress.with_name(progress.name.removesuffix(".progress.json"))
        try:
            same = orjson.loads(progress.read_bytes()).get("plan") == plan_dict
        except (OSError, ValueError):
            same = False
        if same:
            return target
        err.print(f"note: {progress}: an unfinished update of another plan, removed",
                  highlight=False, markup=False)
        progress.unlink(missing_ok=True)
        target.with_name(target.name + ".partial").unlink(missing_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return previous.with_name(f"{prefix}.update-{stamp}.jsonl.gz")


@app.command("update")
def update(
    corpus: Annotated[Path, typer.Argument(help="A corpus built from 'openmsd fetch'.")],
    api_key: Annotated[str | None, typer.Option(
        envvar="OPENALEX_API_KEY", show_envvar=True,
        help="Your OpenAlex API key (free at openalex.org/settings/api).")] = None,
    max_cost: Annotated[float | None, typer.Option(
        help="USD: stop before this run spends more (progress kept).")] = None,
    timeout: Annotated[float, typer.Option(
        help="Seconds one request may take, answer body included.")] = 60.0,
    api_url: Annotated[str | None, typer.Option(help="The OpenAlex API (default: the "
                                                     "fetch's).")] = None,
    overlap: Annotated[int, typer.Option(
        help="Days before the last run that the publication-date window starts (a free key; "
             "works indexed late are found).")] = OVERLAP_DAYS,
    mailto: Annotated[str | None, typer.Option(hidden=True)] = None,
    watch: Annotated[list[Path] | None, typer.Option(
        help="Then watch for this library (as 'openmsd watch --seeds': a file, or "
             "zotero:local or zotero:local/COLLECTION): what is new for it.")] = None,
    atom_file: AtomOpt = None,
    html_file: HtmlOpt = None,
    json: JsonOpt = False,
) -> None:
    """Fetch what is new since the corpus's last fetch, ingest it, and embed and index it for
    every model the corpus has an index for; the corpus's adapters ('openmsd train adapter')
    are trained again on the grown graph (seconds); with --watch, then list what is new for a
    library (one command for a cron job).

    With a paid OpenAlex plan, the last fetch's plan runs again on the works updated since
    (from_updated_date). Otherwise (a free key, or none: the date filters are paid-only), the
    works published since the last run less --overlap days that cite the corpus's works or
    match its search and filters, and the seeds updated since, are fetched; works already in
    the corpus are left out."""
    need_clients()
    mailto_note(mailto)
    if overlap < 0:
        fail(f"--overlap {overlap}: expected 0 or more days")
    if watch:
        check_outputs(watch, atom_file, html_file)
    summary = _update(corpus, api_key, max_cost, timeout, api_url, overlap, json)
    if watch:  # with --json, the watch's object is the one printed
        run_watch(corpus, watch, None, None, atom_file, html_file, WATCH_K, None, None, None,
                  json)
    elif json:
        emit(summary, True)


def _update_plan(client: Any, corpus: Path, sidecar: dict[str, Any], overlap: int,
                 json: bool) -> tuple[Any, frozenset[str], str]:
    """The plan of an update (see :func:`update`), the corpus's works (left out of what is
    written) and the way new works are found (``updated`` or ``published``)."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.fetch import PER_PAGE, FetchPlan

    base = FetchPlan.from_dict(sidecar.get("base_plan") or sidecar["plan"])
    base.per_page = min(base.per_page, PER_PAGE)  # fetches before 2026 paged by 200
    last = sidecar["finished"]
    refused = client.date_filter_refusal(last)
    if refused is None:
        return FetchPlan.from_dict({**base.as_dict(), "since": last}), frozenset(), "updated"
    works = _corpus_works(corpus)
    start = (datetime.strptime(last, "%Y-%m-%d") - timedelta(days=overlap)).strftime("%Y-%m-%d")
    plan = FetchPlan(seeds=base.seeds, search=base.search, filters=base.filters, depth=0,
                     max_works=base.max_works, since=last, per_page=base.per_page,
                     published_since=start, cites=works, include_xpac=base.include_xpac)
    if not json:
        err.print(f"note: this key cannot filter by updated date ({refused}); looking for "
                  f"works published since {start} that cite the corpus's {len(works):,} "
                  "OpenAlex works or match its search and filters, and for its seeds updated "
                  f"since {last}", highlight=False, markup=False)
    return plan, frozenset(works), "published"


def _update(corpus: Path, api_key: str | None, max_cost: float | None, timeout: float,
            api_url: str | None, overlap: int, json: bool) -> dict[str, Any]:
    """Fetch, ingest, embed and index what is new since the last fetch of ``corpus``, and
    train its adapters again; the fetch's report, since when, the papers embedded per vector
    key and the adapters trained again."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.cli.output import progress as bars
    from openmsd.corpus import Corpus, CorpusError
    from openmsd.eval import sdsm_per_query
    from openmsd.fetch import FetchError, OpenAlex, Polite, crawl
    from openmsd.index import build_index
    from openmsd.ingest import ingest
    from openmsd.models import embed_corpus, find_adapter, load_model
    from openmsd.report import IngestError
    from openmsd.server import indexed_models
    from openmsd.train import refresh_adapters
    from openmsd.vectors import stored_backends, vector_key

    try:
        previous, sidecar = _last_fetch(corpus)
        check_timeout(timeout)
        client = OpenAlex(api_url or sidecar["api_url"], Polite(timeout=timeout), api_key,
                          max_cost)
        plan, known, mode = _update_plan(client, corpus, sidecar, overlap, json)
        target = _update_target(previous, plan.as_dict())
        base = sidecar.get("base_plan") or sidecar["plan"]
        with fetch_progress() as progress:
            report = crawl(client, plan, target, ticker(progress, "fetching OpenAlex"), known,
                           {"base_plan": base, "found_by": mode})
        embedded: dict[str, int] = {}
        if not json:
            print_report(vars(report), False)
        summary = {"fetch": vars(report), "since": plan.since, "found_by": mode,
                   "published_since": plan.published_since, "embedded": embedded}
        if not report.works:
            if not json:
                out.print(f"{corpus}: nothing new since {plan.since}", highlight=False)
            return summary
        ingest([target], corpus)
        adapted = set()
        for model in indexed_models(corpus):
            if find_adapter(model, Corpus(corpus)) is not None:
                adapted.add(model)  # mapped, not embedded: trained again below
                continue
            for backend in stored_backends(Corpus(corpus), model, "index"):  # each store apart
                key = vector_key(model, backend)
                done = embed_corpus(Corpus(corpus), load_model(model, backend), key)
                build_index(Corpus(corpus), key)
                embedded[key] = done.embedded
                if not json:
                    out.print(f"{key}: {done.embedded:,} papers embedded and indexed",
                              highlight=False)
        retrained: dict[str, float] = {}
        with bars() as start:
            for manifest in refresh_adapters(Corpus(corpus), sdsm_per_query, start):
                name = manifest["name"]
                if name in adapted or Corpus(corpus).layout.index_dir(name).exists():
                    build_index(Corpus(corpus), name)  # its index holds the new papers too
                retrained[manifest["name"]] = manifest["training"]["seconds"]
                if not json:
                    out.print(f"{manifest['name']}: trained again on the grown graph in "
                              f"{manifest['training']['seconds']:.0f} s "
                              f"({manifest['training']['chosen']['candidate']}; "
                              f"{manifest['mapped']:,} papers mapped)", highlight=False)
        summary["adapters"] = retrained
        summary["ranker"] = _retrain_ranker(Corpus(corpus), json)
        return summary
    except (FetchError, CorpusError, IngestError, FileNotFoundError, ValueError) as error:
        fail(str(error))


def _retrain_ranker(corpus: Any, json: bool) -> dict[str, Any] | None:
    """Train the corpus's ranker again on the grown graph, where one was trained
    ('openmsd train ranker'); what it keeps and gains out of fold (None: none to retrain)."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.cli.output import progress as bars
    from openmsd.experiment import TuneError, train_ranker
    from openmsd.rank import tuned

    if not any("selection" in entry.record for entry in tuned(corpus).values()):
        return None
    try:
        with bars() as start:
            found = train_ranker(corpus, progress=start)
    except TuneError as error:  # too few links now: the ranker trained before stays
        if not json:
            err.print(f"the ranker was not trained again: {error}", highlight=False)
        return {"kept": "as trained before", "why": str(error)}
    gains = {name: {"chosen": fit["paper"]["chosen"],
                    "over_best_single": fit["paper"]["gain_over_best_single"]}
             for name, fit in found["report"].items() if "paper" in fit}
    if not json:
        for name, gain in gains.items():
            out.print(f"{name}: the ranker trained again on the grown graph: "
                      f"{gain['chosen']}, {gain['over_best_single']:.2f}x the best single "
                      "signal out of fold", highlight=False)
    return gains
