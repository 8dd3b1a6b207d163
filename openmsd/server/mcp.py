"""The MCP server (``openmsd mcp CORPUS``): related papers, search, citation recommendation,
explanations, paper records and what is new for a library, as tools an AI assistant calls.

One long-lived process keeps the corpus, the models' indexes and query encoders loaded
(:class:`~openmsd.server.resources.Resources`, as ``openmsd serve`` does), and every tool
answers through the corpus's :class:`~openmsd.search.SearchService` (``resources.search``),
the same way as the command line and the HTTP API. The tools only read: none writes to the
corpus (``whats_new`` reports a watch without storing it).

Each tool's arguments have a JSON schema (types and bounds); a result is structured: each
paper's id, DOI, title, language, year, relevance (the calibrated probability of a link;
null where unrated) and evidence (why it is there). A bad argument (a wrong type, ``k`` over
:data:`MAX_K`, a text over :data:`MAX_TEXT` characters, an unknown paper) is a tool error
with one line saying what was expected, never a crash. The SDK is the official ``mcp``
package (the ``mcp`` extra), imported when a server is built.
"""

from __future__ import annotations

import logging
import os
import re
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, Field, StringConstraints

from openmsd.corpus import parse_variant, variant_summaries
from openmsd.present import ranked
from openmsd.rank import tuned, weighs
from openmsd.search import (
    MAX_LOCATIONS,
    CitationRequest,
    Hit,
    PaperNotFoundError,
    Result,
    SearchService,
    find_paper,
    language_problem,
    paper_details,
    stored_watches,
    watch_library,
)
from openmsd.server.resources import Resources

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["EXPLAIN_DEPTH", "MAX_K", "MAX_QUERY", "MAX_TEXT", "McpTools", "mcp_server",
           "run_mcp"]

MAX_K = 100
"""Results a tool returns at most."""
MAX_QUERY = 10_000
"""Characters of a query (a paper id, a DOI, a title or an abstract)."""
MAX_TEXT = 50_000
"""Characters of a manuscript text to recommend citations for."""
MAX_SEEDS = 200
EXPLAIN_DEPTH = 1000
"""How deep ``explain`` looks for the second paper among the first one's related papers."""
TEXT_SIMILARITY = "similar title and abstract"
"""The evidence of a result no other signal explains (its text is near the query's)."""
WARM_UP = "multilingual related papers"
"""The search run once at start."""
log = logging.getLogger("openmsd.mcp")

Language = Annotated[str, StringConstraints(pattern=r"^[a-z]{2,3}(-[A-Za-z]{2,8})?$")]
Languages = Annotated[list[Language], Field(
    max_length=50, description="Only papers in these languages (ISO 639 codes, e.g. "
    "['pt', 'es']); empty: every language.")]
K = Annotated[int, Field(ge=1, le=MAX_K, description="How many papers (1 to 100).")]
YearFrom = Annotated[int | None, Field(ge=0, le=3000, description="Only papers from this year.")]
YearTo = Annotated[int | None, Field(ge=0, le=3000, description="Only papers up to this year.")]
Key = Annotated[str, StringConstraints(min_length=1, max_length=500), Field(
    description="A paper id, a DOI (10.xxxx/..., any form) or an alias (openalex:W123).")]

Query = Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUERY), Field(
    description="A paper id or DOI, or a pasted title or abstract (any language).")]
Text = Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUERY), Field(
    description="A question, a topic, a title or an abstract, in any language.")]
Manuscript = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT), Field(
    description="A paragraph or more; citation markers ([1], (Smith, 2020), \\cite{x}) "
    f"mark where citations go, else each paragraph is one; the first {MAX_LOCATIONS} "
    "locations are answered.")]

PerLocation = Annotated[int, Field(ge=1, le=20, description="Papers per location (1-20).")]
At = Annotated[str | None, StringConstraints(min_length=1, max_length=1000), Field(
    description="Only the sentences containing this text (a marker).")]
Seeds = Annotated[list[Key], Field(max_length=MAX_SEEDS, description="The library: paper ids "
                  "or DOIs; empty: the library last watched with 'openmsd watch'.")]
Since = Annotated[date | None, Field(description="YYYY-MM-DD: papers that entered the corpus "
                  "since then (default: since the library's last watch).")]


class Paper(BaseModel):
    """A paper of the corpus in a ranked answer."""

    id: str = Field(description="The corpus paper id (give it to 'paper' or 'explain').")
    doi: str | None
    title: str | None
    english_title: str | None = Field(description="Its English title, when it has another "
                                      "language and the source gives one.")
    language: str | None = Field(description="ISO 639 code of its language.")
    year: int | None
    venue: str | None
    rank: int = Field(description="Its place in the answer, from 1.")
    relevance: float | None = Field(description="The probability, 0 to 1, that it is linked "
                                    "to the query, from the corpus's trained ranker; null: "
                                    "unrated.")
    score: float = Field(description="The ranker's raw score (its scale depends on the ranker).")
    evidence: list[str] = Field(description="Why it is there: citation links to the query "
                                "paper, shared references, co-citations, the text signals "
                                "that matched.")


class Ranked(BaseModel):
    """Papers ranked for a query."""

    query_paper: str | None = Field(description="The corpus paper the query named, if any.")
    ranker: str
    results: list[Paper]


class Driver(BaseModel):
    sentence: str
    score: float


class Recommended(Paper):
    drivers: list[Driver] = Field(description="The context sentences that point to it most.")


class Location(BaseModel):
    """Papers to cite at one place of the text."""

    sentence_number: int = Field(description="The sentence's number in the text, from 1.")
    sentence: str
    markers: list[str] = Field(description="The citation markers found in the sentence.")
    results: list[Recommended]


class Recommendations(BaseModel):
    model: str
    locations: list[Location]


class Explanation(BaseModel):
    """Why paper ``related`` is related to paper ``paper``."""

    paper: str
    related: str
    ranker: str
    rank: int | None = Field(description="Its place among the paper's related papers (None: "
                             "not among the first 1000).")
    relevance: float | None
    cites: bool = Field(description="The related paper cites the paper.")
    cited_by: bool = Field(description="The paper cites the related paper.")
    shared_references: int
    co_cited: int
    evidence: list[str]
    related_paper: Paper | None = Field(description="The related paper as a result shows it.")
    ranker_weighs: dict[str, float] | None = Field(
        None, description="What the corpus's learned ranker weighs, when it is gradient-boosted "
                          "trees: each piece of evidence's share of the trees' gain.")


class Record(BaseModel):
    """A paper's record."""

    id: str
    doi: str | None
    title: str | None
    abstract: str | None
    language: str | None
    year: int | None
    venue: str | None
    authors: list[str] | None
    keywords: list[str] | None
    english_title: str | None
    english_abstract: str | None = Field(description="Its English abstract, when it has "
                                         "another language and one is known.")
    english_summary: str | None = Field(description="An English summary made by 'openmsd "
                                        "enrich', where there is one and no English abstract.")
    references: int = Field(description="Its citations to corpus papers.")
    cited_by: int = Field(description="Corpus papers citing it.")


class WhatsNew(BaseModel):
    """The papers that entered the corpus since a library's last watch, ranked for it."""

    seeds: list[str] = Field(description="The library's papers (corpus ids).")
    since: str | None = Field(description="The start of the window (ISO time; None: every "
                              "paper, a first watch).")
    new: int = Field(description="Papers new in that window.")
    results: list[Paper]


class McpTools:
    """The tools over ``resources``: plain methods, each one answer (the MCP layer adds the
    schemas). A :class:`ValueError` says what was wrong with the arguments."""

    def __init__(self, resources: Resources):
        self.resources = resources

    @property
    def service(self) -> SearchService:
        return self.resources.search

    def _key(self) -> str:
        """The vector key of the default served model (whose index ranks libraries)."""
        return self.resources.ranker(self.resources.default_model)

    def _filters(self, languages: list[str], year_from: int | None, year_to: int | None
                 ) -> tuple[list[str] | None, tuple[int | None, int | None] | None]:
        if year_from is not None and year_to is not None and year_from > year_to:
            raise ValueError(f"year_from {year_from} is after year_to {year_to}")
        problem = language_problem(self.resources.corpus, languages or None)
        if problem:
            raise ValueError(f"languages: {problem}")
        years = (year_from, year_to) if year_from is not None or year_to is not None else None
        return languages or None, years

    def _paper(self, key: str, field: str) -> str:
        try:
            return find_paper(self.resources.corpus, key.strip())
        except PaperNotFoundError:
            raise ValueError(f"{field}: no paper with id or DOI {key.strip()[:200]!r} in this "
                             "corpus (find one with 'search')") from None

    def related(self, query: str, k: int = 10, languages: list[str] | None = None,
                year_from: int | None = None, year_to: int | None = None) -> Ranked:
        """The papers related to a paper (id or DOI), or to a pasted title or abstract."""
        languages, years = self._filters(languages or [], year_from, year_to)
        text = query.strip()
        if not text:
            raise ValueError("query: empty; give a paper id, a DOI, or a title or abstract")
        if len(text.split()) == 1:  # one word: an id or DOI, never a text to search
            paper_id = self._paper(text, "query")
        else:
            try:
                paper_id = find_paper(self.resources.corpus, text)
            except PaperNotFoundError:
                paper_id = None
        if paper_id is None:
            return self.search(text, k, languages or [], year_from, year_to)
        ranker = self.resources.related_ranker
        try:
            found = self.service.related(paper_id, ranker, k, languages, years)
        except PaperNotFoundError as error:
            raise ValueError(str(error)) from None
        return Ranked(query_paper=paper_id, ranker=ranker, results=papers(found))

    def search(self, text: str, k: int = 10, languages: list[str] | None = None,
               year_from: int | None = None, year_to: int | None = None) -> Ranked:
        """The papers nearest to a free text in any language."""
        languages, years = self._filters(languages or [], year_from, year_to)
        if not text.strip():
            raise ValueError("text: empty; give a query, a title or an abstract")
        ranker = self.resources.search_ranker
        found = self.service.search(text, ranker, k, languages, years)
        return Ranked(query_paper=None, ranker=ranker, results=papers(found))

    def recommend_citations(self, text: str, k: int = 5, at: str | None = None,
                            languages: list[str] | None = None, year_from: int | None = None,
                            year_to: int | None = None) -> Recommendations:
        """Papers to cite at each citation location of a manuscript text."""
        languages, years = self._filters(languages or [], year_from, year_to)
        model = self.resources.default_model
        key = self._key()
        try:
            found = self.service.recommend(CitationRequest(
                text, key, k, at=at, languages=languages, years=years, explain=True),
                self.resources.encoder(model))
        except ValueError as error:
            raise ValueError(f"{'at' if at else 'text'}: {error}") from None
        locations = []
        for location in found:
            shown = ranked([r.as_dict() for r in location.results])
            locations.append(Location(
                sentence_number=location.sentence_number, sentence=location.sentence,
                markers=list(location.markers),
                results=[Recommended(**paper_fields(row), drivers=[
                    Driver(sentence=d["sentence"], score=d["score"]) for d in row["drivers"]])
                    for row in shown]))
        return Recommendations(model=key, locations=locations)

    def explain(self, paper: str, related: str) -> Explanation:
        """Why paper ``related`` is related to paper ``paper``."""
        first, second = self._paper(paper, "paper"), self._paper(related, "related")
        if first == second:
            raise ValueError("related: the same paper as 'paper'; give two different papers")
        ranker = self.resources.related_ranker
        found = self.service.related(first, ranker, EXPLAIN_DEPTH)
        shown = papers(found)
        match = next((p for p in shown if p.id == second), None)
        if match is None:  # not ranked: its citation links alone, as a result shows them
            result = self.service.results([Hit(second, 0.0)], first)[0]
            evidence = list(result.why)
            links = result
        else:
            evidence = match.evidence
            links = next(r for r in found if r.paper_id == second)
        return Explanation(
            paper=first, related=second, ranker=ranker,
            rank=match.rank if match else None, relevance=match.relevance if match else None,
            cites=links.cited_by, cited_by=links.cites,
            shared_references=links.shared_references, co_cited=links.co_cited,
            evidence=evidence or ["no citation link, and not among the first "
                                  f"{EXPLAIN_DEPTH} related papers"],
            related_paper=match,
            ranker_weighs=weighs(tuned(self.resources.corpus).get(ranker)))

    def paper(self, id: str) -> Record:
        """A paper's record, with its English abstract or summary where there is one."""
        paper_id = self._paper(id, "id")
        found = paper_details(self.resources.corpus, paper_id)
        summary = None
        if found.get("language") != "en" and not found.get("english_abstract"):
            summary = english_summary(self.resources, paper_id)
        return Record(id=found["paper_id"], english_summary=summary,
                      **{name: found.get(name) for name in Record.model_fields
                         if name not in ("id", "english_summary")})

    def whats_new(self, seeds: list[str] | None = None, since: date | None = None,
                  k: int = 10) -> WhatsNew:
        """The papers new since the last watch of a library, ranked for it."""
        corpus = self.resources.corpus
        if seeds:
            positive = list(dict.fromkeys(self._paper(s, "seeds") for s in seeds))
            negative: list[str] = []
        else:
            watches = stored_watches(corpus)
            if not watches:
                raise ValueError("seeds: none given and no library watched in this corpus yet; "
                                 "give paper ids or DOIs, or run 'openmsd watch' first")
            positive, negative = watches[0]["positive"], watches[0]["negative"]
        start = datetime.combine(since, datetime.min.time(), UTC) if since else None
        found = watch_library(corpus, positive, negative, self._key(), k, start,
                              index=self.resources.index(self.resources.default_model),
                              record=False)
        shown = ranked([r.as_dict() for r in found.results])
        return WhatsNew(seeds=positive, since=found.since.isoformat() if found.since else None,
                        new=found.new, results=[Paper(**paper_fields(r)) for r in shown])


def one_line(text: str) -> str:
    """A tool error in one line: pydantic's argument report (a header, then each field and
    its message on lines of their own, with a link) as ``tool: field: message; ...``.

    >>> one_line("Error executing tool search: 1 validation error for searchArguments\\n"
    ...          "k\\n  Input should be less than or equal to 100 [type=less_than_equal, "
    ...          "input_value=10000, input_type=int]\\n    For further information visit x")
    'Error executing tool search: k: Input should be less than or equal to 100 (got 10000)'
    """
    head, _, rest = text.partition("\n")
    report = re.match(r"(Error executing tool \w+): \d+ validation errors? for \w+$", head)
    if not report:
        return " ".join(text.split())
    said, field = [], None
    for line in rest.splitlines():
        if not line.startswith(" "):
            field = line.strip()
        elif not line.startswith("    ") and field is not None:
            message = re.sub(r"\s*\[type=.*$", "", line.strip())
            value = re.search(r"input_value=(.{1,40}?)(?:, input_type=|\]$)", line)
            got = f" (got {value.group(1)})" if value and "..." not in value.group(1) else ""
            said.append(f"{field}: {message}{got}")
    return f"{report.group(1)}: {'; '.join(said)}"


class OneLineErrors:
    """Server middleware: a tool error's text in one line (:func:`one_line`); the answer
    reaches it serialised (``isError``, ``content`` blocks)."""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method == "tools/call" and isinstance(result, dict) and result.get("isError"):
            result = {**result, "content": [
                {**block, "text": one_line(block["text"])} if block.get("type") == "text"
                else block for block in result.get("content", [])]}
        return result


def paper_fields(row: dict[str, Any]) -> dict[str, Any]:
    """The :class:`Paper` fields of a ranked result row (``as_dict`` plus rank, relevance)."""
    return {"id": row["paper_id"], "doi": row["doi"], "title": row["title"],
            "english_title": row["english_title"], "language": row["language"],
            "year": row["year"], "venue": row["venue"], "rank": row["rank"],
            "relevance": row["relevance"], "score": row["score"],
            "evidence": list(row["why"]) or [TEXT_SIMILARITY]}


def papers(results: list[Result]) -> list[Paper]:
    """``results`` (best first) as ranked :class:`Paper` answers."""
    return [Paper(**paper_fields(row)) for row in ranked([r.as_dict() for r in results])]


def english_summary(resources: Resources, paper_id: str) -> str | None:
    """An English summary of paper ``paper_id`` from the corpus's summaries (``openmsd
    enrich``), the longest variant first; None when there is none."""
    folder = resources.corpus.root / "summaries"
    variants = []
    for entry in sorted(folder.iterdir()) if folder.is_dir() else []:
        try:
            variants.append(parse_variant(entry.name))
        except ValueError:
            continue
    for method, length in sorted(variants, key=lambda v: -v[1]):
        try:
            summary = variant_summaries(resources.corpus, method, length).get(paper_id)
        except FileNotFoundError:
            continue
        if summary:
            return summary
    return None


INSTRUCTIONS = (
    "openmsd answers from the researcher's own corpus of papers, in every language: 'search' "
    "for a question or topic, 'related' for what to read next after a paper, "
    "'recommend_citations' for a paragraph with citation markers, 'explain' for why two papers "
    "are related, 'paper' for a record (with its English abstract), 'whats_new' for the new "
    "papers of a watched library. Results carry evidence: cite it when you recommend a paper.")


def mcp_server(resources: Resources) -> MCPServer:
    """The MCP server of ``resources``: its six read-only tools, their schemas from the
    arguments' types, each answer a structured result."""
    # optional: the mcp extra; mcp takes ~1.4 s to import
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations

    tools = McpTools(resources)
    server = MCPServer("openmsd", instructions=INSTRUCTIONS, version="0.1.0",
                       log_level="WARNING", middleware=[OneLineErrors()])
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False,
                                idempotent_hint=True, open_world_hint=False)

    def answer(method: Any, **arguments: Any) -> Any:
        try:
            return method(**arguments)
        except ValueError as error:
            raise ToolError(str(error)) from None

    @server.tool(annotations=read_only, title="Related papers")
    def related(query: Query, k: K = 10, languages: Languages = [],  # noqa: B006
                year_from: YearFrom = None, year_to: YearTo = None) -> Ranked:
        """The papers most related to a paper of the corpus (its id or DOI), or to a pasted
        title or abstract, in every language, each with the evidence of why."""
        return answer(tools.related, query=query, k=k, languages=languages,
                      year_from=year_from, year_to=year_to)

    @server.tool(annotations=read_only, title="Search")
    def search(text: Text, k: K = 10, languages: Languages = [],  # noqa: B006
               year_from: YearFrom = None, year_to: YearTo = None) -> Ranked:
        """The papers nearest to a free text (a question, a topic, a title), in any
        language: a French query finds English and Portuguese papers too."""
        return answer(tools.search, text=text, k=k, languages=languages, year_from=year_from,
                      year_to=year_to)

    @server.tool(annotations=read_only, title="Recommend citations")
    def recommend_citations(
            text: Manuscript,
            k: PerLocation = 5, at: At = None,
            languages: Languages = [],  # noqa: B006
            year_from: YearFrom = None, year_to: YearTo = None) -> Recommendations:
        """Papers to cite at each citation location of a manuscript paragraph, with the
        context sentences that point to each."""
        return answer(tools.recommend_citations, text=text, k=k, at=at, languages=languages,
                      year_from=year_from, year_to=year_to)

    @server.tool(annotations=read_only, title="Explain a relation")
    def explain(paper: Key, related: Key) -> Explanation:
        """Why paper ``related`` is related to paper ``paper``: its rank among the paper's
        related papers, their citation links and the text signals."""
        return answer(tools.explain, paper=paper, related=related)

    @server.tool(annotations=read_only, title="Paper record")
    def paper(id: Key) -> Record:
        """A paper's record: title, abstract, authors, venue, year, language, its English
        title and abstract (or an English summary) where there is one, citation counts."""
        return answer(tools.paper, id=id)

    @server.tool(annotations=read_only, title="What is new")
    def whats_new(
            seeds: Seeds = [], since: Since = None, k: K = 10) -> WhatsNew:  # noqa: B006
        """The papers that entered the corpus since a library's last watch (or a date),
        ranked for the whole library across languages, with why. Reads only: the watch is
        not stored."""
        return answer(tools.whats_new, seeds=seeds, since=since, k=k)

    return server


def run_mcp(corpus: str, models: list[str], http: bool = False, port: int = 8765,
            backend: str | None = None) -> None:
    """Load ``corpus`` and ``models`` once (encoders, indexes, the per-build structures) and
    answer MCP requests until the client goes: on stdio, or with ``http`` over streamable
    HTTP at ``http://127.0.0.1:PORT/mcp`` (loopback only)."""
    import faiss  # lazy: faiss takes ~0.3 s to import

    faiss.omp_set_num_threads(1)
    os.environ.setdefault("OPENMSD_THREADS", "1")
    resources = Resources(corpus, models, backend)
    for model in resources.models:
        resources.encoder(model)
    resources.warm()
    # one search through the tools' path: the first question should not wait for the lexical
    # index and the fused ranker's first query
    resources.search.search(WARM_UP, resources.search_ranker, 1)
    resources.watch()
    server = mcp_server(resources)
    try:
        if http:
            server.run("streamable-http", host="127.0.0.1", port=port)
        else:
            server.run("stdio")
    finally:
        resources.close()
