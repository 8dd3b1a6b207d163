"""The JSON API: papers, related papers, search, citation recommendation, BibTeX, statistics.

Every route is a thin call into :mod:`openmsd.search` (related, search, library and recommend
through the corpus's :class:`~openmsd.search.SearchService`, ``resources.search``); parameters
are validated here (a bad one is a 422 naming the field), unknown papers are 404s. The
functions ``search_or_related``, ``related_page`` and ``recommend_for`` are shared with the HTML
pages.

Most routes are plain functions, run in the thread pool (they embed text or scan tables). A
paper and its related papers are answered from what the server keeps in memory in about a
millisecond: those two routes run on the event loop (no thread hop, no contention for the GIL
between pool threads), unless the structures they read are being loaded (:func:`quick`).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar, get_type_hints

from fastapi import APIRouter, Body, Depends, HTTPException, Query, Request
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, BeforeValidator, Field, StringConstraints, create_model
from starlette.concurrency import run_in_threadpool

from openmsd.export import EXPORTS, export
from openmsd.present import ranked, ranked_locations
from openmsd.search import (
    MAX_LOCATIONS,
    CitationRequest,
    PaperNotFoundError,
    find_paper,
    language_problem,
    paper_details,
    papers_by_id,
)
from openmsd.search import Result as RelatedResult
from openmsd.server.resources import Resources

MAX_K = 100
MAX_RANK = 1000
"""Results are ranked up to this depth: ``offset + k`` may not exceed it."""
MAX_QUERY = 10_000
MAX_TEXT = 50_000
MAX_IDS = 200
T = TypeVar("T")

Language = Annotated[str, StringConstraints(pattern=r"^[a-z]{2,3}(-[A-Za-z]{2,8})?$")]
Model = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Key = Annotated[str, StringConstraints(min_length=1, max_length=500)]
Year = Annotated[Annotated[int, Field(ge=0, le=3000)] | None,
                 BeforeValidator(lambda v: None if v == "" else v)]  # an empty form field


INCLUDE_NON_PAPERS = ("Rank records that are not papers too (errata, retraction notices, "
                      "editorials, paratext, book reviews, records without abstract, full text "
                      "or references); by default they are left out, and counted in "
                      "left_out.")
LEFT_OUT = ("The records that are not papers left out above the last result, by kind "
            "(erratum, retraction, editorial, paratext, book-review, stub); empty with "
            "include_non_papers.")


class Filters(BaseModel):
    """Which results, and which page of them."""

    k: int = Field(10, ge=1, le=MAX_K, description="Results per page.")
    offset: int = Field(0, ge=0, lt=MAX_RANK, description="Results to skip (pagination).")
    lang: list[Language] = Field([], max_length=50,
                                 description="Only papers in these languages (ISO 639).")
    year_from: int | None = Field(None, ge=0, le=3000, description="Only papers from this year.")
    year_to: int | None = Field(None, ge=0, le=3000, description="Only papers up to this year.")
    model: Model | None = Field(None, description="A served model; the default when absent.")
    include_non_papers: bool = Field(False, description=INCLUDE_NON_PAPERS)

    @property
    def years(self) -> tuple[int | None, int | None] | None:
        return (self.year_from, self.year_to) if self.year_from or self.year_to else None


def check_languages(resources: Resources, languages: list[str] | None, where: str) -> None:
    """A 422 naming the field when no paper of the corpus is in any of ``languages`` (the
    command line's exit 2: :func:`openmsd.search.language_problem`), so that an empty
    result is never left unexplained."""
    problem = language_problem(resources.corpus, languages)
    if problem:
        raise HTTPException(422, [{"loc": [where, "lang"], "type": "value_error",
                                   "msg": problem}])


async def filters(request: Request, k: Annotated[int, Query(ge=1, le=MAX_K)] = 10,
                  offset: Annotated[int, Query(ge=0, lt=MAX_RANK)] = 0,
                  lang: Annotated[list[Language], Query(max_length=50)] = [],  # noqa: B006
                  year_from: Annotated[Year, Query()] = None,
                  year_to: Annotated[Year, Query()] = None,
                  model: Annotated[Model | None, Query()] = None,
                  include_non_papers: Annotated[bool, Query(description=INCLUDE_NON_PAPERS)]
                  = False) -> Filters:
    # async: a dependency this quick should not take a trip through the thread pool
    if year_from is not None and year_to is not None and year_from > year_to:
        raise HTTPException(422, [{"loc": ["query", "year_from"], "type": "value_error",
                                   "msg": f"a reversed year range: year_from {year_from} is "
                                          f"after year_to {year_to}"}])
    check_languages(request.app.state.resources, lang, "query")
    return Filters(k=k, offset=offset, lang=lang, year_from=year_from, year_to=year_to,
                   model=model, include_non_papers=include_non_papers)


def model_of(source: type, doc: str) -> type[BaseModel]:
    """The pydantic model of a dataclass: its fields, their types and defaults (a default
    factory's value as the default), under the dataclass's name."""
    hints = get_type_hints(source)
    fields: dict[str, Any] = {}
    for item in dataclasses.fields(source):
        if item.default is not dataclasses.MISSING:
            default = item.default
        elif item.default_factory is not dataclasses.MISSING:
            default = item.default_factory()
        else:
            default = ...
        fields[item.name] = (hints[item.name], default)
    return create_model(source.__name__, __doc__=doc, **fields)


Result = model_of(RelatedResult, "A related paper and why it is related.")
"""The API's result: :class:`openmsd.search.related.Result`, field for field."""


class Ranked(Result):  # type: ignore[misc, valid-type]
    """A result with its place and a relevance a person can read."""

    rank: int = Field(description="Its place in the ranking, from 1 (across pages).")
    relevance: float | None = Field(description="The probability, 0 to 1, that it is linked to "
                                    "the query (cites it, is cited by it or beside it, shares "
                                    "its references), from the corpus's trained ranker "
                                    "('openmsd train ranker', calibrated out of fold); null "
                                    "where the ranker is not calibrated (unrated).")


class Paper(BaseModel):
    """A corpus paper."""

    paper_id: str
    doi: str | None
    title: str | None
    abstract: str | None
    abstract_source: str | None = Field(None, description="The source its abstract came from "
                                        "(openalex, crossref, ...).")
    type: str | None = Field(None, description="The kind of work as its source names it "
                             "(article, dissertation, dataset, preprint, ...).")
    language: str | None
    year: int | None
    venue: str | None
    authors: list[str] | None
    keywords: list[str] | None
    english_title: str | None
    english_abstract: str | None
    references: int = Field(description="Its citations to corpus papers.")
    cited_by: int = Field(description="Corpus papers citing it.")


class Results(BaseModel):
    """One page of ranked papers."""

    model: str
    offset: int
    k: int
    next_offset: int | None = Field(description="The offset of the next page, if any.")
    paper: Paper | None = Field(None, description="The paper the query named, when it named "
                                "one (by id or DOI): the results are then its related papers.")
    results: list[Ranked]
    left_out: dict[str, int] = Field({}, description=LEFT_OUT)


class RelatedRequest(BaseModel):
    """A library: papers to find related papers to, and papers to steer away from."""

    positive: list[Key] = Field(min_length=1, max_length=MAX_IDS,
                                description="Paper ids, DOIs or aliases of the library.")
    negative: list[Key] = Field([], max_length=MAX_IDS, description="Papers to steer away "
                                "from.")
    k: int = Field(10, ge=1, le=MAX_K)
    lang: list[Language] = Field([], max_length=50)
    year_from: int | None = Field(None, ge=0, le=3000)
    year_to: int | None = Field(None, ge=0, le=3000)
    model: Model | None = None
    include_non_papers: bool = Field(False, description=INCLUDE_NON_PAPERS)


class LibraryResult(Ranked):
    """A paper related to a library, with the seeds that put it there."""

    seeds: list[str]


class LibraryResults(BaseModel):
    """The papers related to a library."""

    model: str
    positive: list[str]
    negative: list[str]
    results: list[LibraryResult]
    left_out: dict[str, int] = Field({}, description=LEFT_OUT)


class RecommendRequest(BaseModel):
    """Manuscript text to recommend citations for."""

    text: str = Field(min_length=1, max_length=MAX_TEXT,
                      description="A paragraph or more; citation markers ([1], (Smith, 2020), "
                      "\\cite{x}) mark where citations go, else every paragraph is one; the first "
                      f"{MAX_LOCATIONS} locations are answered ('openmsd recommend' answers "
                      "all).")
    at: str | None = Field(None, min_length=1, max_length=1000,
                           description="Only the sentences containing this text.")
    k: int = Field(5, ge=1, le=MAX_K)
    lang: list[Language] = Field([], max_length=50)
    year_from: int | None = Field(None, ge=0, le=3000)
    year_to: int | None = Field(None, ge=0, le=3000)
    model: Model | None = None
    explain: bool = Field(True, description="Name the context sentences that drove each "
                          "result (one more embedding pass over the context sentences).")
    include_non_papers: bool = Field(False, description=INCLUDE_NON_PAPERS)


class Driver(BaseModel):
    """A context sentence and its similarity to the recommended paper."""

    sentence: str
    score: float


class Recommended(Ranked):
    """A paper to cite and the context sentences that point to it most, best first."""

    drivers: list[Driver] = Field([])


class Location(BaseModel):
    """Papers to cite at one place of the text."""

    location: int = Field(description="The sentence's index, from 0.")
    sentence_number: int = Field(description="The sentence's number, from 1, as the command "
                                 "line prints it ('sentence 32').")
    sentence: str
    markers: list[str]
    context: list[str] = Field(description="The sentences embedded: before, this, after.")
    supplemental: list[str] = Field([], description="Sentences from earlier in the text "
                                    "embedded with the context (MP-BERT4CR's macro context, "
                                    "for encoders that read one).")
    results: list[Recommended]
    left_out: dict[str, int] = Field({}, description=LEFT_OUT)


class Recommendations(BaseModel):
    model: str
    locations: list[Location]


def served_model(resources: Resources, model: str | None, where: str = "query",
                 default: str | None = None) -> str:
    """The model or ranker to use (``default``, else the first served model, when absent); a
    422 naming the field for one the server does not serve."""
    if model is None:
        return default or resources.default_model
    if model not in resources.models and model not in resources.rankers:
        raise HTTPException(422, [{"loc": [where, "model"], "type": "value_error",
                                   "msg": f"model {model!r} is not served here; served: "
                                          f"{', '.join([*resources.rankers, *resources.models])}"}])
    return model


def _page(model: str, f: Filters, results: list[Any], paper: dict | None = None) -> dict:
    shown = results[f.offset:f.offset + f.k]
    more = len(results) > f.offset + f.k and f.offset + f.k < MAX_RANK
    return {"model": model, "offset": f.offset, "k": f.k,
            "next_offset": f.offset + f.k if more else None, "paper": paper,
            "results": ranked([r.as_dict() for r in shown], f.offset + 1),
            "left_out": dict(getattr(results, "left_out", {}))}


def paper_or_404(resources: Resources, key: str) -> dict[str, Any]:
    try:
        return paper_details(resources.corpus, key)
    except PaperNotFoundError:
        raise HTTPException(404, f"no paper with id or DOI {key!r}") from None


def related_page(resources: Resources, key: str, f: Filters) -> dict[str, Any]:
    """A page of the papers related to paper ``key`` (404 when unknown or without a vector)."""
    model = served_model(resources, f.model, default=resources.related_ranker)
    paper = paper_or_404(resources, key)
    try:
        # one more than the page so we know whether a next page exists
        found = resources.search.related(paper["paper_id"], resources.ranker(model),
                                         f.offset + f.k + 1,
                                         f.lang or None, f.years,
                                         include_non_papers=f.include_non_papers)
    except PaperNotFoundError:  # a served model's index without the paper's vector
        raise HTTPException(404, f"paper {paper['paper_id']!r} has no vector for model "
                            f"{model!r} (it has no title or abstract, or was added after "
                            "the index was built)") from None
    return _page(model, f, found, paper)


def names_paper(resources: Resources, q: str) -> bool:
    """Whether ``q`` is a corpus paper's id, DOI or alias."""
    try:
        find_paper(resources.corpus, q.strip())
    except PaperNotFoundError:
        return False
    return True


def search_or_related(resources: Resources, q: str, f: Filters) -> dict[str, Any]:
    """Related papers when ``q`` is a paper id or DOI, else the papers nearest to the text."""
    model = served_model(resources, f.model, default=resources.search_ranker)
    if names_paper(resources, q):
        return related_page(resources, q.strip(), f)
    return _page(model, f, resources.search.search(q, resources.ranker(model),
                                                   f.offset + f.k + 1, f.lang or None, f.years,
                                                   include_non_papers=f.include_non_papers))


def related_to_library_for(resources: Resources, body: RelatedRequest) -> dict[str, Any]:
    """The papers related to a library (404 naming a seed the corpus does not have)."""
    model = served_model(resources, body.model, "body")
    if model not in resources.models:  # a fused ranker: a library needs one dense index
        raise HTTPException(422, [{"loc": ["body", "model"], "type": "value_error",
                                   "msg": f"model {model!r} is a ranker; related to a library "
                                          "needs a dense model with an index: "
                                          f"{', '.join(resources.models)}"}])
    years = (body.year_from, body.year_to) if body.year_from or body.year_to else None
    check_languages(resources, body.lang, "body")
    try:
        positive = [find_paper(resources.corpus, key) for key in body.positive]
        negative = [find_paper(resources.corpus, key) for key in body.negative]
        found = resources.search.library(positive, resources.ranker(model), negative, body.k,
                                         body.lang or None, years,
                                         include_non_papers=body.include_non_papers)
    except PaperNotFoundError as error:
        raise HTTPException(404, str(error).split(": ", 1)[-1]) from None
    return {"model": model, "positive": positive, "negative": negative,
            "results": ranked([r.as_dict() for r in found]), "left_out": found.left_out}


def recommend_for(resources: Resources, body: RecommendRequest) -> dict[str, Any]:
    model = served_model(resources, body.model, "body")
    years = (body.year_from, body.year_to) if body.year_from or body.year_to else None
    check_languages(resources, body.lang, "body")
    try:
        found = resources.search.recommend(CitationRequest(
            body.text, resources.ranker(model), body.k, at=body.at,
            languages=body.lang or None, years=years,
            explain=body.explain, include_non_papers=body.include_non_papers),
            resources.encoder(model))
    except ValueError as error:
        raise HTTPException(422, [{"loc": ["body", "at" if body.at else "text"],
                                   "type": "value_error", "msg": str(error)}]) from None
    return {"model": model, "locations": ranked_locations([x.as_dict() for x in found])}


async def search_answer(resources: Resources, q: str, f: Filters) -> dict[str, Any]:
    """:func:`search_or_related` for the API. A search, once the per-build structures and
    the ranker are loaded, runs on the event loop: it awaits its query vector from the
    batching encoder (no pool thread held while it waits), then searches the index (dense
    only, a millisecond) or ranks the fused candidates (a few milliseconds); a filtered fused
    search and any search during a reload run in the thread pool."""
    model = served_model(resources, f.model, default=resources.search_ranker)
    ranking = resources.search.built(resources.ranker(model))
    fused = model not in resources.models
    if not resources.warmed() or ranking is None or (fused and (f.lang or f.years)):
        return await run_in_threadpool(search_or_related, resources, q, f)
    if names_paper(resources, q):
        return related_page(resources, q.strip(), f)
    # its served dense members' query vectors, awaited from their batching encoders
    vectors = await resources.query_vectors(ranking.scorer, q)
    return _page(model, f, resources.search.search(q, ranking, f.offset + f.k + 1,
                                                   f.lang or None, f.years, vectors=vectors,
                                                   include_non_papers=f.include_non_papers))


async def quick(resources: Resources, answer: Callable[..., T], *args: Any) -> T:
    """``answer(*args)`` on the event loop when the per-build structures are loaded (a
    millisecond of work), else in the thread pool (it may wait seconds for them to load)."""
    if resources.warmed():
        return answer(*args)
    return await run_in_threadpool(answer, *args)


async def resources_of(request: Request) -> Resources:
    return request.app.state.resources


Served = Annotated[Resources, Depends(resources_of)]
Filtered = Annotated[Filters, Depends(filters)]
router = APIRouter()


@router.get("/healthz", tags=["service"])
def healthz(resources: Served) -> dict[str, Any]:
    """Liveness, how many papers each served model's index holds, how many times a rebuilt
    index was swapped in, how many texts each query encoder took in how many batches, and
    the process that answered (``serve --workers N``: one of N)."""
    return {"status": "ok", "pid": os.getpid(),
            "indexed": {m: resources.index(m).index.ntotal for m in resources.models},
            "reloads": {m: resources.indexes[m].reloads for m in resources.models},
            "encoded": resources.encoded()}


@router.get("/api/stats", tags=["corpus"])
def stats(resources: Served) -> dict[str, Any]:
    """Corpus statistics (as ``openmsd corpus stats --json``) and the served indexes."""
    return {**resources.stats(),
            "models": {m: {"indexed": resources.index(m).index.ntotal,
                           "index": type(resources.index(m).index).__name__,
                           "default": m == resources.default_model}
                       for m in resources.models}}


@router.get("/api/search", response_model=Results, tags=["search"])
async def search_route(resources: Served, f: Filtered,
                 q: Annotated[str, Query(min_length=1, max_length=MAX_QUERY,
                                         description="A DOI, a paper id, a title, an abstract "
                                                     "or a query, in any language.")]
                 ) -> dict[str, Any]:
    """Papers for a free text; for a paper id or DOI, that paper's related papers."""
    if not q.strip():
        raise HTTPException(422, [{"loc": ["query", "q"], "type": "value_error",
                                   "msg": "the query is blank"}])
    return await search_answer(resources, q, f)


@router.get("/api/papers/{key:path}/related", response_model=Results, tags=["papers"])
async def related_route(resources: Served, f: Filtered, key: Key) -> dict[str, Any]:
    """The papers most related to a paper (id or DOI), in any language, with why."""
    return await quick(resources, related_page, resources, key, f)


@router.get("/api/papers/{key:path}", response_model=Paper, tags=["papers"])
async def paper_route(resources: Served, key: Key) -> dict[str, Any]:
    """A paper by id, DOI or alias."""
    return await quick(resources, paper_or_404, resources, key)


POST_EXAMPLES: dict[str, dict[str, dict[str, Any]]] = {
    "/api/related": {
        "library": {"summary": "Papers related to two papers of a library",
                    "value": {"positive": ["10.1590/2236-8906-76-2021",
                                           "10.1590/2236-8906-108/2020"], "k": 5}},
        "filtered": {"summary": "Away from one paper, only Portuguese and Spanish, 2015 on",
                     "value": {"positive": ["10.1590/2236-8906-76-2021"],
                               "negative": ["10.1590/1676-0611-bn-2021-1306"],
                               "lang": ["pt", "es"], "year_from": 2015, "k": 10}},
    },
    "/api/recommend": {
        "markers": {"summary": "A paragraph with citation markers",
                    "value": {"text": "Child vaccination in Brazil is unequal: children of "
                                      "black and brown mothers are vaccinated less [3].",
                              "k": 5}},
        "at": {"summary": "Only the sentence containing a marker",
               "value": {"text": "Forests recover slowly [1]. Orchids of central Brazil "
                                 "are little known [2].", "at": "[2]", "k": 3,
                         "explain": False}},
    },
}
"""The POST routes' example bodies: in the OpenAPI document, and in the answer to a GET."""


def wrong_method(method: str, path: str, allowed: str, base: str = "http://127.0.0.1:8000"
                 ) -> str:
    """What a 405 says: which method the route at ``path`` takes and, for a POST route, an
    example request to the server at ``base``.

    >>> print(wrong_method("GET", "/api/recommend", "POST")[:64])
    GET /api/recommend: this endpoint takes POST only, with a JSON b
    """
    examples = POST_EXAMPLES.get(path)
    if not examples:
        return f"{method} {path}: this endpoint takes {allowed} only"
    body = json.dumps(next(iter(examples.values()))["value"], ensure_ascii=False)
    return (f"{method} {path}: this endpoint takes POST only, with a JSON body, e.g. "
            f"curl -X POST -H 'Content-Type: application/json' -d '{body}' "
            f"{base.rstrip('/')}{path} "
            "(every field and more examples: /openapi.json)")


@router.post("/api/related", response_model=LibraryResults, tags=["papers"])
def related_library_route(
        resources: Served,
        body: Annotated[RelatedRequest, Body(openapi_examples=POST_EXAMPLES["/api/related"])],
) -> dict[str, Any]:
    """Papers related to a whole library (positive seeds), away from negative seeds; each
    result names the seeds that put it there. POST only: the library is a JSON body."""
    return related_to_library_for(resources, body)


@router.post("/api/recommend", response_model=Recommendations, tags=["recommend"])
def recommend_route(
        resources: Served,
        body: Annotated[RecommendRequest,
                        Body(openapi_examples=POST_EXAMPLES["/api/recommend"])],
) -> dict[str, Any]:
    """Papers to cite at each citation location of a manuscript text. POST only: the text is
    a JSON body."""
    return recommend_for(resources, body)


@router.get("/api/bibtex", response_class=PlainTextResponse, tags=["papers"],
            responses={200: {"content": {media: {} for _, media, _ in EXPORTS.values()}}})
def bibtex_route(request: Request, resources: Served,
                 id: Annotated[list[Key], Query(min_length=1, max_length=MAX_IDS,
                                                description="Paper ids.")],
                 format: Annotated[Literal["bib", "ris", "csl"] | None, Query(
                     description="bib (BibTeX), ris or csl (CSL-JSON); else from the Accept "
                                 "header; BibTeX by default.")] = None,
                 ) -> PlainTextResponse:
    """The given papers for a reference manager: BibTeX, RIS or CSL-JSON (unknown ids are
    left out)."""
    if format is None:
        accept = request.headers.get("accept", "")
        format = next((name for name, (_, media, _) in EXPORTS.items() if media in accept),
                      "bib")
    _, media, filename = EXPORTS[format]
    text = export(papers_by_id(resources.corpus, list(dict.fromkeys(id))), format)
    return PlainTextResponse(text, media_type=f"{media}; charset=utf-8",
                             headers={"Content-Disposition":
                                      f'attachment; filename="{filename}"'})
