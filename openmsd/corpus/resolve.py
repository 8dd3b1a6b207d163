"""Reference resolution by title: references without a usable identifier matched to papers.

A reference matches a paper when their normalised titles (accents, case and punctuation folded;
the paper's translated titles count too; the reference's with and without a venue glued to its
end, as citation parsers often leave it) are equal, or similar above ``threshold`` by
rapidfuzz's ``ratio``, and their years differ by at most ``year_slack`` when both are known.
Fuzzy matching needs a year on the reference and looks only at papers of compatible years.
A reference with two or more matching papers is *ambiguous* and is not guessed; a match to the
citing paper itself is reported as a *self*-citation.

>>> import pyarrow as pa
>>> papers = pa.table({"paper_id": ["p1"], "year": [2003],
...                    "titles": [["Un analyseur du français"]]})
>>> refs = pa.table({"row": [0], "citing_id": ["p2"], "title": ["Un analyseur du francais."],
...                  "year": [2003]})
>>> resolve_titles(refs, papers).to_pylist()
[{'row': 0, 'cited_id': 'p1', 'resolution': 'title'}]
"""

from __future__ import annotations

import re
from collections import defaultdict

import pyarrow as pa
from rapidfuzz import fuzz, process

from openmsd.identifiers import normalize_title

MIN_EXACT_CHARS = 12
MIN_FUZZY_CHARS = 20
RESULT = pa.schema([("row", pa.int64()), ("cited_id", pa.string()), ("resolution", pa.string())])


# A venue glued to the end of a parsed reference title: "..., Actes de TALN'2005",
# "... In: Proceedings of ...", "... in TALN2009", "..., TALN'98".
_VENUE_TAILS = [
    re.compile(r"[.,;:”»\"]\s*(?:in\s*:?|dans|actes|acte|proceedings|proc\.)\s.*$", re.I),
    re.compile(r"\s+(?i:in)\s+[A-ZÉ][A-ZÉ’'-]{2,}\s*['’-]?\s*\d{0,4}\s*$"),
    re.compile(r"[.,;”»\"]\s*[A-ZÉ][A-ZÉ-]{2,}\s*['’-]?\s*\d{2,4}\s*$"),
]


def title_variants(title: str | None) -> list[str]:
    """Normalised forms of a reference title: as given, and without a trailing venue."""
    if not title:
        return []
    variants = [normalize_title(title)]
    for pattern in _VENUE_TAILS:
        cut = normalize_title(pattern.sub("", title))
        if cut and cut not in variants:
            variants.append(cut)
    return variants


class TitleIndex:
    """Normalised titles of papers, by exact value and by year for fuzzy look-ups."""

    def __init__(self, papers: pa.Table):
        """``papers``: ``paper_id``, ``year``, ``titles`` (a list of titles per paper)."""
        self.exact: dict[str, set[str]] = defaultdict(set)
        self.by_year: dict[int | None, list[tuple[str, str]]] = defaultdict(list)
        self.year: dict[str, int | None] = {}
        for paper_id, year, titles in zip(papers["paper_id"].to_pylist(),
                                          papers["year"].to_pylist(),
                                          papers["titles"].to_pylist(), strict=True):
            self.year[paper_id] = year
            for norm in {normalize_title(t) for t in titles or [] if t}:
                if len(norm) >= MIN_EXACT_CHARS:
                    self.exact[norm].add(paper_id)
                    self.by_year[year].append((norm, paper_id))

    def _compatible(self, paper_id: str, year: int | None, slack: int) -> bool:
        other = self.year.get(paper_id)
        return year is None or other is None or abs(other - year) <= slack

    def match(self, title: str | None, year: int | None, *, threshold: float = 90.0,
              margin: float = 3.0, year_slack: int = 1) -> tuple[set[str], str | None]:
        """Candidate paper ids for one reference and how they were found (None: no match)."""
        variants = [v for v in title_variants(title) if len(v) >= MIN_EXACT_CHARS]
        for norm in variants:
            exact = {p for p in self.exact.get(norm, ()) if self._compatible(p, year, year_slack)}
            if exact:
                return exact, "title"
        variants = [v for v in variants if len(v) >= MIN_FUZZY_CHARS]
        if year is None or not variants:
            return set(), None
        choices = [c for y in range(year - year_slack, year + year_slack + 1)
                   for c in self.by_year.get(y, ())]
        best: dict[str, float] = {}
        for norm in variants:
            found = process.extract(norm, [c[0] for c in choices], scorer=fuzz.ratio,
                                    score_cutoff=threshold - margin, limit=None)
            for _, score, index in found:
                paper_id = choices[index][1]
                best[paper_id] = max(score, best.get(paper_id, 0.0))
        if not best or max(best.values()) < threshold:
            return set(), None
        top = max(best.values())
        return {p for p, s in best.items() if s >= top - margin}, "title-fuzzy"


def resolve_titles(references: pa.Table, papers: pa.Table, *, threshold: float = 90.0,
                   margin: float = 3.0, year_slack: int = 1) -> pa.Table:
    """Match references (``row``, ``citing_id``, ``title``, ``year``) to ``papers``.

    Returns ``row``, ``cited_id``, ``resolution`` for every reference that matched something:
    ``title`` or ``title-fuzzy`` with the paper, ``self`` when the only match is the citing
    paper, ``ambiguous`` (``cited_id`` null) when several papers match.
    """
    index = TitleIndex(papers)
    rows: list[dict[str, object]] = []
    for row, citing, title, year in zip(references["row"].to_pylist(),
                                        references["citing_id"].to_pylist(),
                                        references["title"].to_pylist(),
                                        references["year"].to_pylist(), strict=True):
        found, how = index.match(title, year, threshold=threshold, margin=margin,
                                 year_slack=year_slack)
        if how is None:
            continue
        others = found - {citing}
        if not others:
            rows.append({"row": row, "cited_id": citing, "resolution": "self"})
        elif len(others) == 1:
            rows.append({"row": row, "cited_id": others.pop(), "resolution": how})
        else:
            rows.append({"row": row, "cited_id": None, "resolution": "ambiguous"})
    return pa.Table.from_pylist(rows, schema=RESULT)
