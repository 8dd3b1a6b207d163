"""The web page: search (``/``, ``/?q=`` rendered on the server), a paper with its related
papers (``/papers/{id}``) and citation recommendation (``/recommend``).

Pages are Jinja2 templates with autoescaping on: every title, abstract and name is escaped.
They work without JavaScript; ``static/app.js`` adds BibTeX preview, select-all and filters
that apply on change.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from openmsd.identifiers import doi_url
from openmsd.present import driver_position, shorten
from openmsd.rank import left_out_line
from openmsd.search import load_paper_records, papers_by_id
from openmsd.server.api import (
    MAX_IDS,
    MAX_K,
    MAX_QUERY,
    MAX_TEXT,
    Filters,
    Key,
    Language,
    Model,
    RecommendRequest,
    RelatedRequest,
    Served,
    filters,
    paper_or_404,
    recommend_for,
    related_page,
    related_to_library_for,
    search_or_related,
)
from openmsd.server.pictures import GRAPH_K, picture_of

TEMPLATES = Path(__file__).parent / "templates"
# control characters, and the bidirectional-text controls (U+061C, U+200E/F, U+202A-E, U+2066-9)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f"
                      "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _no_controls(value: Any) -> Any:
    """A value printed in a page, without the control characters HTML does not allow (NUL)."""
    if not isinstance(value, str):
        return value
    cleaned = _CONTROL.sub("", value)
    return Markup(cleaned) if isinstance(value, Markup) else cleaned  # escaped already: keep


env = Environment(loader=FileSystemLoader(TEMPLATES),
                  autoescape=select_autoescape(["html"], default=True),
                  trim_blocks=True, lstrip_blocks=True, finalize=_no_controls)
env.filters["paper_url"] = lambda paper_id: "/papers/" + quote(paper_id, safe="")
env.filters["doi_url"] = doi_url
env.globals["driver_position"] = driver_position
SNIPPET = 240
"""Characters of the abstract shown under a search result (cut at a word)."""
router = APIRouter(include_in_schema=False)


def render(request: Request, template: str, status_code: int = 200, **values: Any
           ) -> HTMLResponse:
    resources = request.app.state.resources
    html = env.get_template(template).render(request=request, models=resources.models,
                                             default_model=resources.default_model, **values)
    return HTMLResponse(html, status_code)


def error_page(request: Request, status: int, detail: Any) -> HTMLResponse:
    """An error as a page: the message, or the fields that failed validation."""
    fields = detail if isinstance(detail, list) else []
    message = detail if isinstance(detail, str) else None
    return render(request, "error.html", status, status=status, message=message, fields=fields)


def language_chart(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Bars of the result languages: ``language``, ``n``, ``width`` (percent of the largest)."""
    counts = Counter(r.get("language") or "und" for r in results).most_common()
    top = counts[0][1] if counts else 1
    return [{"language": lang, "n": n, "width": round(100 * n / top)} for lang, n in counts]


def _page_links(request: Request, page: dict[str, Any]) -> dict[str, str | None]:
    """The previous and next pages' links and, where records that are not papers were left
    out, the link to this page with them (``include``), and the line saying what was left out
    (``left_out``)."""
    params = [(k, v) for k, v in request.query_params.multi_items() if k != "offset"]
    prev = max(0, page["offset"] - page["k"]) if page["offset"] else None

    def link(offset: int | None) -> str | None:
        if offset is None:
            return None
        return f"{request.url.path}?{urlencode([*params, ('offset', offset)])}"

    return {"prev": link(prev), "next": link(page["next_offset"]),
            **left_out_links(request, page.get("left_out") or {})}


def left_out_links(request: Request, left_out: dict[str, int]) -> dict[str, str | None]:
    """``left_out``: the line saying which records that are not papers were left out (None:
    none was); ``include``: this page's address with them."""
    line = left_out_line(left_out, None)
    if line is None:
        return {"left_out": None, "include": None}
    params = [(k, v) for k, v in request.query_params.multi_items()
              if k not in ("offset", "include_non_papers")]
    return {"left_out": line, "include": f"{request.url.path}?"
            f"{urlencode([*params, ('include_non_papers', 'true')])}"}


def _filters_shown(resources: Any, f: Filters) -> dict[str, Any]:
    return {"languages": resources.languages(), "chosen": set(f.lang),
            "year_from": f.year_from, "year_to": f.year_to, "model": f.model}


PageFilters = Annotated[Filters, Depends(filters)]


def snippets(resources: Any, results: list[dict[str, Any]]) -> dict[str, str]:
    """The start of each result's abstract (its English abstract where it has no other), by
    paper id: what a search result shows under its title."""
    records = load_paper_records(resources.corpus).get(
        [r["paper_id"] for r in results], ["paper_id", "abstract"])
    return {record["paper_id"]: shorten(record["abstract"], SNIPPET)
            for record in records if record["abstract"]}


def examples(resources: Any) -> list[dict[str, str]]:
    """Queries to try on the home page, from the corpus itself: the first words of a title in
    another language than English (else any title), and a paper's id for its related papers."""
    records = load_paper_records(resources.corpus)
    titled = [(paper_id, title, language) for paper_id, title, language in zip(
        records.column("paper_id"), records.column("title"), records.column("language"),
        strict=True) if title and len(title.split()) >= 4]
    if not titled:
        return []
    other = [t for t in titled if t[2] not in (None, "en", "und")] or titled
    _, title, language = other[0]
    words = " ".join(title.split()[:5]).rstrip(".,:;")
    found = [{"q": words, "what": f"words of a title ({language or 'und'}): papers on it in "
                                  "every language"}]
    return [*found, {"q": titled[0][0], "what": "a paper's id or DOI: its related papers"}]


@router.get("/", response_class=HTMLResponse)
def home(request: Request, resources: Served, f: PageFilters,
         q: Annotated[str | None, Query(max_length=MAX_QUERY)] = None) -> HTMLResponse:
    """The search box; with ``q``, its results."""
    page = None
    if q and q.strip():
        page = search_or_related(resources, q, f)
    return render(request, "search.html", q=q or "", page=page,
                  snippets=snippets(resources, page["results"]) if page else {},
                  examples=[] if page else examples(resources),
                  bars=language_chart(page["results"]) if page else [],
                  links=_page_links(request, page) if page else {},
                  filters=_filters_shown(resources, f), stats=resources.stats())


@router.get("/papers/{key:path}", response_class=HTMLResponse)
def paper_view(request: Request, resources: Served, f: PageFilters, key: str) -> HTMLResponse:
    """A paper and its related papers."""
    if len(key) > 500:
        raise HTTPException(422, [{"loc": ["path", "key"], "msg": "at most 500 characters",
                                   "type": "string_too_long"}])
    paper = paper_or_404(resources, key)
    try:
        page = related_page(resources, paper["paper_id"], f)
        note = None
        wide = related_page(resources, paper["paper_id"],
                            f.model_copy(update={"k": GRAPH_K, "offset": 0}))
        graph = picture_of(resources, [paper["paper_id"]], wide["results"], f.model)
    except HTTPException as error:
        page, note, graph = None, error.detail, None
    return render(request, "paper.html", paper=paper, page=page, note=note, graph=graph,
                  bars=language_chart(page["results"]) if page else [],
                  links=_page_links(request, page) if page else {},
                  filters=_filters_shown(resources, f))


@router.get("/library", response_class=HTMLResponse)
def library_view(request: Request, resources: Served,
                 id: Annotated[list[Key], Query(min_length=1, max_length=MAX_IDS)],
                 not_: Annotated[list[Key], Query(alias="not", max_length=MAX_IDS)] = [],  # noqa: B006
                 k: Annotated[int, Query(ge=1, le=MAX_K)] = 10,
                 lang: Annotated[list[Language], Query(max_length=50)] = [],  # noqa: B006
                 year_from: Annotated[int | None, Query(ge=0, le=3000)] = None,
                 year_to: Annotated[int | None, Query(ge=0, le=3000)] = None,
                 include_non_papers: bool = False) -> HTMLResponse:
    """Related to these N papers: the papers related to a whole library (in ``lang``, from
    ``year_from`` to ``year_to``)."""
    found = related_to_library_for(resources, RelatedRequest(
        positive=id, negative=not_, k=max(k, GRAPH_K), lang=lang, year_from=year_from,
        year_to=year_to, include_non_papers=include_non_papers))
    seeds = papers_by_id(resources.corpus, found["positive"])
    page = {"offset": 0, "k": k, "next_offset": None, "results": found["results"][:k]}
    graph = picture_of(resources, found["positive"], found["results"], found["model"])
    return render(request, "library.html", seeds=seeds, negative=found["negative"], page=page,
                  graph=graph, links=left_out_links(request, found["left_out"]))


@router.get("/recommend", response_class=HTMLResponse)
def recommend_form(request: Request) -> HTMLResponse:
    """The form for a pasted paragraph."""
    return render(request, "recommend.html", text="", found=None, k=5, max_text=MAX_TEXT)


@router.post("/recommend", response_class=HTMLResponse)
def recommend_view(request: Request, resources: Served,
                   text: Annotated[str, Form(min_length=1, max_length=MAX_TEXT)],
                   k: Annotated[int, Form(ge=1, le=MAX_K)] = 5,
                   lang: Annotated[list[Language], Form(max_length=50)] = [],  # noqa: B006
                   model: Annotated[Model | None, Form()] = None) -> HTMLResponse:
    """Recommended citations for each citation location of the pasted text."""
    found = recommend_for(resources, RecommendRequest(text=text, k=k, lang=lang, model=model))
    for location in found["locations"]:
        location["left_out_line"] = left_out_line(location.get("left_out") or {}, None)
    return render(request, "recommend.html", text=text, found=found, k=k, max_text=MAX_TEXT)
