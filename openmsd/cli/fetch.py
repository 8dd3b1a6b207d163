"""``openmsd fetch openalex|crossref`` and ``openmsd update`` (the API clients are imported
when a command runs, not when ``openmsd`` starts)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from openmsd.cli.options import JsonOpt
from openmsd.cli.output import emit, err, fail, out, warn
from openmsd.cli.watch import WATCH_K, AtomOpt, HtmlOpt, check_outputs, run_watch

__all__ = ["app", "fetch_app"]

DEFAULT_API = "https://api.openalex.org"
CROSSREF_API = "https://api.crossref.org"
OVERLAP_DAYS = 30  # an update's publication-date window starts this long before the last run

app = typer.Typer()
fetch_app = typer.Typer(help="Fetch works from the open scholarly APIs (OpenAlex, Crossref).",
                        no_args_is_help=True)


def _need_clients() -> None:
    """Fail with the install command when the API clients (the ``fetch`` extra) are absent."""
    import importlib.util

    missing = [name for name in ("pyalex", "pyzotero", "requests")
               if importlib.util.find_spec(name) is None]
    if missing:
        fail(f"openmsd fetch needs {', '.join(missing)}: pip install 'openmsd[fetch]'")


def _ticker(progress: Progress, label: str):
    task = progress.add_task(label, total=None)
    return lambda n: progress.advance(task, n)


def _progress() -> Progress:
    return Progress(SpinnerColumn(), TextColumn("{task.description}"),
                    TextColumn("{task.completed:,} works"), TimeElapsedColumn(),
                    console=err, transient=True, disable=not err.is_terminal)


def _filters(values: list[str] | None) -> dict[str, str]:
    filters = {}
    for value in values or []:
        key, sep, val = value.partition(":")
        if not sep or not key or not val:
            fail(f"--filter {value!r}: expected FIELD:VALUE, e.g. language:fr, "
                  "publication_year:2010-2020, topics.id:T10181")
        filters[key.strip()] = val.strip()
    return filters


def _since(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%d").strftime("%Y-%m-%d")
    except ValueError:
        fail(f"--since {value!r}: expected a date YYYY-MM-DD")
    return None


def _cost_line(report: dict) -> str:
    """``cost $0.0012 (12 billed calls); $0.9988 left today of $1 a day``, or ``""``."""
    if "cost_usd" not in report:
        return ""
    line = f"; cost ${report['cost_usd']:.4f} ({report.get('billed_calls', 0):,} billed calls)"
    left, limit = report.get("budget_remaining_usd"), report.get("budget_limit_usd")
    if left is not None:
        line += f", ${left:.4f} left today" + (f" of ${limit:g} a day" if limit else "")
    return line


def _print_report(report: dict, as_json: bool) -> None:
    if not as_json:
        for item in report.get("unresolved", []):
            err.print(f"  unresolved: {item.get('seed') or item.get('doi')} "
                      f"({item.get('origin', '')}): {item['reason']}", highlight=False,
                      markup=False)
        for old, new in report.get("merged", {}).items():
            err.print(f"  merged: {old} -> {new}", highlight=False)
    rate = report["works"] / report["seconds"] if report["seconds"] else 0.0
    emit(report, as_json, lambda _: escape(
        f"{report['out']}: {report['works']:,} works in {report['requests']:,} requests, "
        f"{report['seconds']:.1f} s ({rate:.1f} works/s); "
        f"{len(report.get('unresolved', [])):,} unresolved"
        + (f"; {report['xpac_works']:,} from outside OpenAlex's core (repositories, DataCite)"
           if report.get("xpac_works") else "")
        + (" (stopped at --max-works)" if report.get("stopped_at_max_works") else "")
        + _cost_line(report)))


def _print_estimate(estimate: dict, as_json: bool) -> None:
    from openmsd.fetch import estimate_view

    emit(estimate, as_json, estimate_view)


@fetch_app.command("openalex")
def fetch_openalex(
    seeds: Annotated[list[str] | None, typer.Argument(
        help="DOIs, OpenAlex ids (W...), arXiv ids or pmid:N.")] = None,
    out_file: Annotated[Path, typer.Option("--out", help="The works JSONL (.gz) to write.")]
    = Path("works.jsonl.gz"),
    seed_file: Annotated[list[Path] | None, typer.Option(
        "--seeds", help="A BibTeX (.bib) or RIS (.ris) library, or a file of ids, one a "
                        "line.")] = None,
    search: Annotated[str | None, typer.Option(help="A full-text search query.")] = None,
    filter_: Annotated[list[str] | None, typer.Option(
        "--filter", help="FIELD:VALUE, an OpenAlex works filter (language:fr, "
                         "publication_year:2010-2020, topics.id:T..., "
                         "authorships.institutions.id:I..., primary_location.source.id:S..."
                         ", concepts.id:C...); repeatable.")] = None,
    zotero: Annotated[str | None, typer.Option(
        help="A Zotero library as user:ID or group:ID (read only).")] = None,
    zotero_collection: Annotated[str | None, typer.Option(
        help="The collection key in that library (default: the whole library).")] = None,
    zotero_key: Annotated[str | None, typer.Option(
        envvar="ZOTERO_API_KEY", help="The Zotero API key (or $ZOTERO_API_KEY).")] = None,
    zotero_url: Annotated[str | None, typer.Option(
        help="The Zotero web API (a test server).")] = None,
    citing: Annotated[bool, typer.Option(help="Also the works citing each work.")] = False,
    depth: Annotated[int, typer.Option(help="Expansion steps from the seeds (0: seeds "
                                            "only).")] = 1,
    max_works: Annotated[int, typer.Option(help="Stop after this many works.")] = 10_000,
    api_key: Annotated[str | None, typer.Option(
        envvar="OPENALEX_API_KEY", show_envvar=True,
        help="Your OpenAlex API key (free at openalex.org/settings/api; $1 a day of calls), "
             "sent as the api_key parameter.")] = None,
    max_cost: Annotated[float | None, typer.Option(
        help="USD: stop before this run spends more (progress kept).")] = None,
    dry_run: Annotated[bool, typer.Option(
        help="Estimate the calls and the cost, making only free calls.")] = False,
    timeout: Annotated[float, typer.Option(
        help="Seconds one request may take, answer body included.")] = 60.0,
    mailto: Annotated[str | None, typer.Option(
        help="Ignored: OpenAlex retired mailto and the polite pool (February 2026); use "
             "--api-key.")] = None,
    since: Annotated[str | None, typer.Option(
        help="YYYY-MM-DD: only works updated since then (OpenAlex's from_updated_date, a "
             "paid-plan filter; with a free key use --filter from_publication_date:DATE).")]
    = None,
    core_only: Annotated[bool, typer.Option(
        "--core-only", help="Leave out the works OpenAlex keeps outside its core "
                            "(repositories, DataCite: theses, preprints, datasets; "
                            "include_xpac).")] = False,
    api_url: Annotated[str, typer.Option(help="The OpenAlex API (a mirror, a test server).")]
    = DEFAULT_API,
    retries: Annotated[int, typer.Option(help="Retries of a 429 / 5xx answer.")] = 5,
    json: JsonOpt = False,
) -> None:
    """Fetch OpenAlex works around seed papers: their references, with --citing their citers,
    --depth steps away; resumable (run it again after an interruption or a spent budget)."""
    _need_clients()
    from openmsd.fetch import FetchError, FetchPlan, OpenAlex, Polite, check_out, crawl, estimate

    _mailto_note(mailto)
    try:
        _check_timeout(timeout)
        if not dry_run:
            check_out(out_file)
        plan = FetchPlan(seeds=_seeds(seeds, seed_file, zotero, zotero_collection, zotero_key,
                                      zotero_url),
                         search=_fit_search(search), filters=_filters(filter_), citing=citing,
                         depth=depth, max_works=max_works, since=_since(since),
                         include_xpac=not core_only)
        client = OpenAlex(api_url, Polite(retries=retries, timeout=timeout), api_key, max_cost)
        if plan.since and not dry_run and (refused := client.date_filter_refusal(plan.since)):
            raise FetchError(f"--since {plan.since}: {refused}; --since filters by updated "
                             "date, which OpenAlex keeps for paid plans: use --filter "
                             f"from_publication_date:{plan.since} (free) for the works "
                             "published since then; nothing written")
        if dry_run:
            _print_estimate(estimate(client, plan).as_dict(), json)
            return
        with _progress() as progress:
            report = crawl(client, plan, out_file, _ticker(progress, "fetching OpenAlex"))
    except FetchError as error:
        fail(str(error))
    _print_report(vars(report), json)


def _fit_search(text: str | None) -> str | None:
    """``text`` within OpenAlex's search length for a free key, cut at a word boundary (with a
    note saying so)."""
    from openmsd.fetch import SEARCH_MAX, fit_search

    if text is None:
        return None
    fitted, cut = fit_search(text)
    if not fitted:
        fail("--search: empty; expected words to search for")
    if cut:
        err.print(f"note: --search is {len(text):,} characters, over the {SEARCH_MAX:,} "
                  f"OpenAlex takes in a search on a free key: cut at a word boundary to "
                  f"{len(fitted):,} characters ({fitted[-40:]!r} is its end)",
                  highlight=False, markup=False)
    return fitted


def _mailto_note(mailto: str | None) -> None:
    if mailto:
        err.print("note: --mailto is ignored: OpenAlex retired mailto and the polite pool on "
                  "February 13, 2026; set OPENALEX_API_KEY (a free key) instead",
                  highlight=False, markup=False)


def _check_timeout(seconds: float) -> None:
    if not seconds > 0 or seconds != seconds or seconds == float("inf"):
        fail(f"--timeout {seconds}: expected a number of seconds above 0")


def _seeds(ids: list[str] | None, files: list[Path] | None, zotero: str | None,
           collection: str | None, key: str | None, url: str | None) -> list:
    from openmsd.fetch import read_seeds, seeds_from_ids, seeds_from_zotero

    seeds = seeds_from_ids(ids or [], "cli")
    for path in files or []:
        seeds += read_seeds(path, warn)
    if zotero:
        seeds += seeds_from_zotero(zotero, collection, key, url)
    return seeds


@fetch_app.command("crossref")
def fetch_crossref_command(
    dois: Annotated[list[str] | None, typer.Argument(help="DOIs.")] = None,
    out_file: Annotated[Path, typer.Option("--out", help="The Crossref JSON to write.")]
    = Path("crossref.json"),
    seed_file: Annotated[list[Path] | None, typer.Option(
        "--seeds", help="A BibTeX / RIS library or a file of DOIs.")] = None,
    lacking: Annotated[Path | None, typer.Option(
        "--lacking-in", help="An OpenAlex fetch output: the DOIs of its works without an "
                             "abstract or references.")] = None,
    mailto: Annotated[str | None, typer.Option(
        envvar="CROSSREF_MAILTO", show_envvar=True,
        help="Your e-mail, sent with every request (required: Crossref's polite pool).")]
    = None,
    plus_token: Annotated[str | None, typer.Option(
        envvar="CROSSREF_PLUS_TOKEN", show_envvar=True,
        help="A Crossref Metadata Plus token (sent as Crossref-Plus-API-Token).")] = None,
    api_url: Annotated[str, typer.Option(help="The Crossref API.")] = CROSSREF_API,
    timeout: Annotated[float, typer.Option(
        help="Seconds one request may take, answer body included.")] = 60.0,
    json: JsonOpt = False,
) -> None:
    """Fetch Crossref works for DOIs: the reference lists and abstracts OpenAlex lacks."""
    _need_clients()
    from openmsd.fetch import (
        FetchError,
        Polite,
        check_mailto,
        check_out,
        dois_lacking,
        fetch_crossref,
        read_seed_file,
    )

    try:
        _check_timeout(timeout)
        check_mailto(mailto)
        check_out(out_file)
        wanted = list(dois or [])
        for path in seed_file or []:
            wanted += [s.key[4:] for s in read_seed_file(path, warn) if s.key and
                       s.key.startswith("doi:")]
        if lacking:
            wanted += dois_lacking(lacking)
        if not wanted:
            fail("no DOI to fetch: give DOIs, --seeds or --lacking-in")
        with _progress() as progress:
            report = fetch_crossref(wanted, out_file, api_url,
                                    Polite(mailto=mailto, timeout=timeout),
                                    _ticker(progress, "fetching Crossref"), plus_token)
    except (FetchError, OSError) as error:
        fail(str(error))
    _print_report(vars(report), json)


def _last_fetch(corpus: Path) -> tuple[Path, dict]:
    """The newest fetch sidecar among the inputs of ``corpus``'s manifest."""
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
    _need_clients()
    _mailto_note(mailto)
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
    from openmsd.cli.output import progress as bars
    from openmsd.corpus import Corpus, CorpusError
    from openmsd.eval import sdsm_per_query
    from openmsd.fetch import FetchError, OpenAlex, Polite, crawl
    from openmsd.index import build_index
    from openmsd.ingest import ingest
    from openmsd.models import embed_corpus, find_adapter, load_model, stored_backends, vector_key
    from openmsd.report import IngestError
    from openmsd.server import indexed_models
    from openmsd.train import refresh_adapters

    try:
        previous, sidecar = _last_fetch(corpus)
        _check_timeout(timeout)
        client = OpenAlex(api_url or sidecar["api_url"], Polite(timeout=timeout), api_key,
                          max_cost)
        plan, known, mode = _update_plan(client, corpus, sidecar, overlap, json)
        target = _update_target(previous, plan.as_dict())
        base = sidecar.get("base_plan") or sidecar["plan"]
        with _progress() as progress:
            report = crawl(client, plan, target, _ticker(progress, "fetching OpenAlex"), known,
                           {"base_plan": base, "found_by": mode})
        embedded: dict[str, int] = {}
        if not json:
            _print_report(vars(report), False)
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
    from openmsd.cli.output import progress as bars
    from openmsd.experiment import TuneError, train_ranker
    from openmsd.rank import tuned

    if not any("selection" in entry for entry in tuned(corpus).values()):
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
