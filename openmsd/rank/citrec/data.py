"""Citing locations, cited papers and held-out citing papers, from a corpus.

A *location* is a sentence of a citing paper that cites one or more candidate papers: the
contexts of ``contexts.parquet`` (ParsCit windows, JATS paragraphs, unarXive paragraphs) are
split into sentences (pySBD), the sentence holding the marker is found (JATS and unarXive give
the marker's offset in the paragraph; a ParsCit window is centred on it), and contexts naming
the same sentence are merged, so a location's ``cited`` list holds its co-citations. When the
citing paper's full text holds the paragraph, the sentences before it are the finished content
the supplemental context is drawn from; otherwise the window's own earlier sentences are.

Candidates are the corpus papers with a title or an abstract; with ``outside=True`` also the
references that resolve to no corpus paper (keyed on their first identifier, ``doi:…``,
``openalex:…``, ``arxiv:…``, else on their normalised title, ``title:…``, so that one work cited
by several papers is one candidate, else ``ref:CITING#REF``; text: the reference's title or raw
string), for corpora such as the unarXive sample whose references lie outside them.

Held-out citing papers (:func:`held_out_citing`) are drawn by seed: their locations are the test
queries, and training never sees them (nor their citations in the co-citation counts).
"""

from __future__ import annotations

import bisect
import contextlib
import random
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field

import numpy as np

from openmsd.corpus import Corpus
from openmsd.identifiers import normalize_title
from openmsd.ingest import without_markers
from openmsd.io import arrow_table
from openmsd.models import paper_input, split_sentences

TRAIN_MANIFEST = "citrec_train.json"
"""The manifest ``train citrec`` writes beside a model: its config and the citing papers it held
out (``data.held_out_citing_papers``), which an evaluation must hold out too."""
#: Sources whose context ``position`` is the marker's offset in the context text.
OFFSET_SOURCES = ("jats", "unarxive")
#: A normalised reference title shorter than this names no work ("Introduction"): such a
#: reference stays its citing paper's own candidate.
MIN_TITLE_CHARS = 15


class CitrecDataError(ValueError):
    """The corpus has no location citing a candidate paper."""


@dataclass
class Location:
    """A citing sentence: ``sentences`` of the manuscript up to the one after it, ``at`` its
    index, ``cited`` the candidate papers it cites."""

    citing_id: str
    sentences: list[str]
    at: int
    cited: list[str]
    source: str = ""
    """The reader the context came from (``parscit``, ``jats``, ``unarxive``, …)."""


@dataclass
class CitrecData:
    """Locations, candidate papers (``{id: (title + abstract, full text)}``), every citing
    paper's cited candidates (for the counts), and what was left out by reason."""

    locations: list[Location]
    papers: dict[str, tuple[str, str | None]]
    reference_lists: dict[str, set[str]]
    left_out: dict[str, int] = field(default_factory=dict)
    years: dict[str, int] = field(default_factory=dict)
    """Publication year of the papers (citing and candidates) that have one."""
    time_keys: dict[str, tuple[int, str]] = field(default_factory=dict)
    """Corpus papers' (year, new-style arXiv id): the arXiv id (``YYMM.NNNNN``) orders papers
    of one year by submission."""

    def sources(self) -> dict[str, int]:
        """Locations per context source."""
        counts: dict[str, int] = {}
        for loc in self.locations:
            counts[loc.source] = counts.get(loc.source, 0) + 1
        return dict(sorted(counts.items()))


def outside_id(citing_id: str, ref_id: str | None, targets: list[str] | None,
               title: str | None = None) -> str:
    """The candidate id of a reference outside the corpus: its first identifier, else its
    normalised title (one work cited by several papers, e.g. TALN's ParsCit references, which
    have no identifier), else the reference itself.

    >>> outside_id("p1", "3", None, "BLEU: a Method for Automatic Evaluation")
    'title:bleu a method for automatic evaluation'
    >>> outside_id("p1", "3", ["doi:10.1/x"], "BLEU"), outside_id("p1", "3", [], "Intro")
    ('doi:10.1/x', 'ref:p1#3')
    """
    if targets:
        return targets[0]
    key = normalize_title(title)
    return f"title:{key}" if len(key) >= MIN_TITLE_CHARS else f"ref:{citing_id}#{ref_id}"


def _candidates(corpus: Corpus, outside: bool) -> dict[str, tuple[str, str | None]]:
    rows = arrow_table(corpus.connect(), "SELECT paper_id, title, abstract, full_text FROM "
                                         "papers ORDER BY paper_id").to_pylist()
    papers = {r["paper_id"]: (paper_input(r["title"], r["abstract"]), r["full_text"])
              for r in rows}
    papers = {k: v for k, v in papers.items() if v[0]}
    if outside:
        refs = arrow_table(corpus.connect(), """
            SELECT citing_id, ref_id, targets, title, raw FROM "references"
            WHERE cited_id IS NULL ORDER BY citing_id, position""").to_pylist()
        for r in refs:
            text = (r["title"] or r["raw"] or "").strip()
            key = outside_id(r["citing_id"], r["ref_id"], r["targets"], r["title"])
            if text and key not in papers:
                papers[key] = (paper_input(text, None), None)
    return papers


def _reference_lists(corpus: Corpus, outside: bool, papers: Collection[str]
                     ) -> dict[str, set[str]]:
    rows = arrow_table(corpus.connect(), 'SELECT citing_id, cited_id, ref_id, targets, title '
                                         'FROM "references"').to_pylist()
    lists: dict[str, set[str]] = {}
    for r in rows:
        cited = r["cited_id"] or (outside_id(r["citing_id"], r["ref_id"], r["targets"],
                                             r["title"]) if outside else None)
        if cited in papers:
            lists.setdefault(r["citing_id"], set()).add(cited)
    return lists


def _wordy(sentence: str) -> bool:
    """Whether a sentence has a letter (a lone "." left by a removed marker has none)."""
    return any(c.isalpha() for c in sentence)


def _offsets(text: str, sentences: list[str]) -> list[int]:
    """Where each sentence starts in ``text`` (sentences in order)."""
    starts, cursor = [], 0
    for sentence in sentences:
        found = text.find(sentence, cursor)
        starts.append(found if found >= 0 else cursor)
        cursor = (found if found >= 0 else cursor) + len(sentence)
    return starts


class _FullTexts:
    """The sentences of citing papers' full texts with their offsets, split once each."""

    def __init__(self, texts: dict[str, tuple[str | None, str | None]]):
        self.texts = texts
        self.cache: dict[str, tuple[list[str], list[int]]] = {}

    def before(self, citing: str, paragraph: str) -> list[str]:
        full, language = self.texts.get(citing, (None, None))
        start = full.find(paragraph[:200]) if full else -1
        if start < 0:
            return []
        if citing not in self.cache:
            self.cache = {}  # one paper at a time: bounded memory
            sentences = split_sentences(full, language)
            self.cache[citing] = (sentences, _offsets(full, sentences))
        sentences, offsets = self.cache[citing]
        return [without_markers(s) for s in sentences[:bisect.bisect_right(offsets, start - 1)]]


def _context_rows(corpus: Corpus, outside: bool) -> Iterator[dict]:
    con = corpus.connect()
    join = ('LEFT JOIN "references" r ON r.citing_id = c.citing_id AND r.ref_id = c.ref_id'
            if outside else "")
    targets = ("r.targets, r.title AS ref_title" if outside
               else "NULL::VARCHAR[] AS targets, NULL::VARCHAR AS ref_title")
    yield from arrow_table(con, f"""
        SELECT c.citing_id, c.cited_id, c.ref_id, {targets}, c.text, c.position, c.source
        FROM contexts c {join}
        ORDER BY c.citing_id, c.text, c.position""").to_pylist()


def load_citrec(corpus: Corpus, outside: bool = False,
         progress: Callable[[int], None] | None = None) -> CitrecData:
    """The locations and candidates of ``corpus`` (see the module docstring)."""
    papers = _candidates(corpus, outside)
    meta = arrow_table(corpus.connect(), "SELECT paper_id, full_text, language FROM papers "
                                         "WHERE full_text IS NOT NULL").to_pylist()
    full = _FullTexts({r["paper_id"]: (r["full_text"], r["language"]) for r in meta})
    left_out: dict[str, int] = {"cited_outside_corpus": 0, "cited_paper_without_text": 0,
                                "empty_context": 0}
    merged: dict[tuple[str, str, int], Location] = {}
    split_cache: dict[str, tuple[list[str], list[int]]] = {}
    for row in _context_rows(corpus, outside):
        cited = row["cited_id"] or (outside_id(row["citing_id"], row["ref_id"], row["targets"],
                                               row["ref_title"]) if outside else None)
        if progress:
            progress(1)
        if cited is None:
            left_out["cited_outside_corpus"] += 1
            continue
        if cited not in papers:
            left_out["cited_paper_without_text"] += 1
            continue
        text = row["text"] or ""
        if text not in split_cache:
            split_cache = {text: ((s := split_sentences(text)), _offsets(text, s))}
        sentences, offsets = split_cache[text]
        if not sentences:
            left_out["empty_context"] += 1
            continue
        position = row["position"]
        anchor = (position if row["source"] in OFFSET_SOURCES and 0 <= (position or -1)
                  <= len(text) else len(text) // 2)
        local = max(0, bisect.bisect_right(offsets, anchor) - 1)
        key = (row["citing_id"], text, local)
        if key not in merged:
            before = [s for s in full.before(row["citing_id"], text) if _wordy(s)]
            own = [without_markers(s) for s in sentences[:local + 2]]
            at = len(before) + sum(1 for s in own[:local] if _wordy(s))
            own = [s for i, s in enumerate(own) if i == local or _wordy(s)]
            merged[key] = Location(row["citing_id"], before + own, at, [],
                                   row["source"] or "")
        if cited not in merged[key].cited:
            merged[key].cited.append(cited)
    locations = [loc for loc in merged.values() if loc.sentences[loc.at]]
    if not locations:
        raise CitrecDataError(f"{corpus.root}: no citation context cites a candidate paper "
                              f"(left out: {left_out}); ingest inputs with citation contexts "
                              "whose references resolve to corpus papers, or use outside "
                              "references")
    return CitrecData(locations, papers, _reference_lists(corpus, outside, papers), left_out,
                      _years(corpus, outside), _time_keys(corpus))


def _time_keys(corpus: Corpus) -> dict[str, tuple[int, str]]:
    rows = arrow_table(corpus.connect(), "SELECT paper_id, year, aliases FROM papers "
                                         "WHERE year IS NOT NULL").to_pylist()
    keys = {}
    for r in rows:
        arxiv = [a[6:] for a in r["aliases"] or [] if a.startswith("arxiv:")
                 and len(a) > 10 and a[6:10].isdigit() and a[10] == "."]
        keys[r["paper_id"]] = (int(r["year"]), min(arxiv, default=""))
    return keys


def _years(corpus: Corpus, outside: bool) -> dict[str, int]:
    """Years of corpus papers and, with ``outside``, of outside references (their own
    ``year`` field)."""
    con = corpus.connect()
    years = {r["paper_id"]: int(r["year"]) for r in arrow_table(
        con, "SELECT paper_id, year FROM papers WHERE year IS NOT NULL").to_pylist()}
    if outside:
        for r in arrow_table(con, 'SELECT citing_id, ref_id, targets, title, year FROM '
                                  '"references" WHERE cited_id IS NULL AND year IS NOT NULL'
                             ).to_pylist():
            key = outside_id(r["citing_id"], r["ref_id"], r["targets"], r["title"])
            with contextlib.suppress(TypeError, ValueError):
                years.setdefault(key, int(r["year"]))
    return years


SPLITS = ("random", "time")


def held_out_citing(citing_ids: Collection[str], fraction: float, seed: int, split: str = "random",
             time_keys: dict[str, tuple[int, str]] | None = None) -> set[str]:
    """The citing papers whose locations are test queries: ``fraction`` of them (at least one
    when there are two or more), drawn by ``seed`` (``split="random"``) or the newest ones
    (``"time"``: by ``time_keys``, (year, arXiv id), then by a seeded draw among equal keys;
    papers without one count as oldest).

    >>> keys = {"a": (2001, ""), "b": (2010, ""), "c": (2005, ""), "d": (2005, "0501.1")}
    >>> sorted(held_out_citing(["a", "b", "c", "d"], 0.5, 0, "time", keys))
    ['b', 'd']
    """
    if not 0 < fraction < 1:
        raise ValueError(f"test_fraction: must be between 0 and 1, got {fraction}")
    if split not in SPLITS:
        raise ValueError(f"split: expected one of {', '.join(SPLITS)}, got {split!r}")
    ids = sorted(set(citing_ids))
    random.Random(seed).shuffle(ids)
    if split == "time":
        # newest first; stable, so the seeded draw breaks ties
        ids.sort(key=lambda i: (time_keys or {}).get(i, (-10**6, "")), reverse=True)
    n = max(1, round(fraction * len(ids))) if len(ids) > 1 else 0
    return set(ids[:n])


def split_locations(data: CitrecData, fraction: float, seed: int, split: str = "random",
                    locations: list[Location] | None = None
                    ) -> tuple[list[Location], list[Location], set[str]]:
    """(train locations, test locations, held-out citing papers) of ``locations`` (default:
    all of ``data``'s)."""
    locations = data.locations if locations is None else locations
    test = held_out_citing({loc.citing_id for loc in locations}, fraction, seed, split,
                    data.time_keys)
    return ([loc for loc in locations if loc.citing_id not in test],
            [loc for loc in locations if loc.citing_id in test], test)


def candidate_mask(data: CitrecData, locations: list[Location], candidates: list[str],
                   split: str) -> np.ndarray:
    """(queries, candidates) True where a candidate may be ranked for a location: never its
    citing paper; with ``split="time"`` only candidates published no later than the citing
    paper (a candidate without a year is kept)."""
    column = {p: i for i, p in enumerate(candidates)}
    mask = np.ones((len(locations), len(candidates)), bool)
    year = np.array([data.years.get(p, -1) for p in candidates])
    for i, loc in enumerate(locations):
        if loc.citing_id in column:
            mask[i, column[loc.citing_id]] = False
        citing_year = data.years.get(loc.citing_id)
        if split == "time" and citing_year is not None:
            mask[i] &= year <= citing_year
    return mask
