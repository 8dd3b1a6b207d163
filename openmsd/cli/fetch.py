"""``openmsd fetch openalex|crossref`` (the API clients are imported when a command runs, not
when ``openmsd`` starts)."""

from __future__ import annotations

import importlib.util
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from openmsd.cli.options import JsonOpt
from openmsd.cli.output import emit, err, fail, warn

__all__ = ["check_timeout", "fetch_app", "fetch_progress", "mailto_note", "need_clients",
           "print_report", "ticker"]

DEFAULT_API = "https://api.openalex.org"
CROSSREF_API = "https://api.crossref.org"

fetch_app = typer.Typer(help="Fetch works from the open scholarly APIs (OpenAlex, Crossref).",
                        no_args_is_help=True)


def need_clients() -> None:
    """Fail with the install command when the API clients (the ``fetch`` extra) are absent."""
    missing = [name for name in ("pyalex", "pyzotero", "requests")
               if importlib.util.find_spec(name) is None]
    if missing:
        fail(f"openmsd fetch needs {', '.join(missing)}: pip install 'openmsd[fetch]'")


def ticker(progress: Progress, label: str):
    task = progress.add_task(label, total=None)
    return lambda n: progress.advance(task, n)


def fetch_progress() -> Progress:
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


def print_report(report: dict, as_json: bool) -> None:
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
    # lazy: a command loads its own code only (openmsd --help start time)
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
    need_clients()
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.fetch import FetchError, FetchPlan, OpenAlex, Polite, check_out, crawl, estimate

    mailto_note(mailto)
    try:
        check_timeout(timeout)
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
        with fetch_progress() as progress:
            report = crawl(client, plan, out_file, ticker(progress, "fetching OpenAlex"))
    except FetchError as error:
        fail(str(error))
    print_report(vars(report), json)


def _fit_search(text: str | None) -> str | None:
    """``text`` within OpenAlex's search length for a free key, cut at a word boundary (with a
    note saying so)."""
    # lazy: a command loads its own code only (openmsd --help start time)
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


def mailto_note(mailto: str | None) -> None:
    if mailto:
        err.print("note: --mailto is ignored: OpenAlex retired mailto and the polite pool on "
                  "February 13, 2026; set OPENALEX_API_KEY (a free key) instead",
                  highlight=False, markup=False)


def check_timeout(seconds: float) -> None:
    if not seconds > 0 or seconds != seconds or seconds == float("inf"):
        fail(f"--timeout {seconds}: expected a number of seconds above 0")


def _seeds(ids: list[str] | None, files: list[Path] | None, zotero: str | None,
           collection: str | None, key: str | None, url: str | None) -> list:
    # lazy: a command loads its own code only (openmsd --help start time)
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
    need_clients()
    # lazy: a command loads its own code only (openmsd --help start time)
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
        check_timeout(timeout)
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
        with fetch_progress() as progress:
            report = fetch_crossref(wanted, out_file, api_url,
                                    Polite(mailto=mailto, timeout=timeout),
                                    ticker(progress, "fetching Crossref"), plus_token)
    except (FetchError, OSError) as error:
        fail(str(error))
    print_report(vars(report), json)
