"""What is new for a stored library, served: ``/feed.atom?seeds=ID&seeds=ID`` (an Atom feed)
and ``/feed`` (the same as a page; without seeds, the libraries ``openmsd watch`` stored).

The server never advances a watch: it answers the window of the last ``openmsd watch`` (or
``update --watch``) of the same seeds and whatever entered the corpus since; for seeds never
watched, every paper (a first watch).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response

from openmsd.present import atom, nothing_new, ranked
from openmsd.search import (
    PaperNotFoundError,
    Watch,
    find_paper,
    seed_set_name,
    stored_watches,
    watch_library,
    watch_state,
)
from openmsd.server.api import MAX_IDS, MAX_K, Key, Served
from openmsd.server.pages import left_out_links, render
from openmsd.server.resources import Resources

__all__ = ["router"]

router = APIRouter(include_in_schema=False)
EVERYTHING = datetime(1970, 1, 1, tzinfo=UTC)

Seeds = Annotated[list[Key], Query(max_length=MAX_IDS)]


def _watch(resources: Resources, seeds: list[str], negative: list[str], k: int,
           include_non_papers: bool = False) -> Watch:
    """The last watch's window of this library (404 naming an unknown seed)."""
    try:
        positive = list(dict.fromkeys(find_paper(resources.corpus, s) for s in seeds))
        away = list(dict.fromkeys(find_paper(resources.corpus, s) for s in negative))
    except PaperNotFoundError as error:
        raise HTTPException(404, str(error).split(": ", 1)[-1]) from None
    state = watch_state(resources.corpus, seed_set_name(positive, away))
    start = EVERYTHING
    if state is not None and state.get("window_start"):
        start = datetime.fromisoformat(state["window_start"])
    model = state["model"] if state and state.get("model") in resources.models \
        else resources.default_model
    found = watch_library(resources.corpus, positive, away, model, k, start,
                          index=resources.index(model), record=False,
                          include_non_papers=include_non_papers)
    if start == EVERYTHING:
        found.since = None
    return found


def _title(found: Watch, resources: Resources) -> str:
    return f"New for a library of {len(found.positive)} papers in {resources.corpus.root.name}"


@router.get("/feed.atom")
def feed_atom(request: Request, resources: Served, seeds: Seeds,
              not_: Annotated[list[Key], Query(alias="not", max_length=MAX_IDS)] = [],  # noqa: B006
              k: Annotated[int, Query(ge=1, le=MAX_K)] = 50,
              include_non_papers: bool = False) -> Response:
    """The Atom feed of what is new for the library ``seeds`` (away from ``not``); records
    that are not papers only with ``include_non_papers``."""
    if not seeds:
        raise HTTPException(422, [{"loc": ["query", "seeds"], "type": "missing",
                                   "msg": "give the library's paper ids: ?seeds=ID&seeds=ID"}])
    found = _watch(resources, seeds, not_, k, include_non_papers)
    base = request.app.state.base_url or ""  # configured (else relative), never the Host
    query = urlencode([("seeds", s) for s in seeds] + [("not", s) for s in not_]
                      + [("k", k)])
    self_url = f"{base}{request.url.path}?{query}"
    return Response(atom(found, _title(found, resources), base, self_url),
                    media_type="application/atom+xml")


@router.get("/feed", response_class=HTMLResponse)
def feed_page(request: Request, resources: Served, seeds: Seeds = [],  # noqa: B006
              not_: Annotated[list[Key], Query(alias="not", max_length=MAX_IDS)] = [],  # noqa: B006
              k: Annotated[int, Query(ge=1, le=MAX_K)] = 50,
              include_non_papers: bool = False) -> HTMLResponse:
    """What is new for a library, as a page; without seeds, the stored libraries."""
    if not seeds:
        libraries = [{**state, "query": urlencode([("seeds", s) for s in state["positive"]]
                                                  + [("not", s) for s in state["negative"]])}
                     for state in stored_watches(resources.corpus)]
        return render(request, "feed.html", found=None, libraries=libraries)
    found = _watch(resources, seeds, not_, k, include_non_papers)
    results: list[dict[str, Any]] = ranked([
        {**r.as_dict(), "arrived": found.arrived[r.paper_id].strftime("%Y-%m-%d")}
        for r in found.results])
    page = {"offset": 0, "k": k, "next_offset": None, "results": results}
    query = urlencode([("seeds", s) for s in seeds] + [("not", s) for s in not_])
    return render(request, "feed.html", found=found, page=page, libraries=[],
                  title=_title(found, resources), atom_url=f"/feed.atom?{query}",
                  links=left_out_links(request, found.left_out),
                  empty=nothing_new(found) if not found.new else None)
