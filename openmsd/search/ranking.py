"""Related papers and search with any ranker (:func:`openmsd.rank.load_scorer`), by default
the fusion of text and citation graph, each result saying which signals put it there.

The collection and its scorers are built once per corpus build and ranker name, then reused
(a serving process answers from memory).
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from openmsd.corpus import Corpus, CorpusError
from openmsd.models import vectors_dir
from openmsd.rank import (
    HYBRID,
    HYBRID_GRAPH,
    Contribution,
    DenseScorer,
    Fusion,
    Papers,
    Queries,
    RankerSpec,
    Scorer,
    corpus_papers,
)
from openmsd.rank import load_scorer as make_scorer
from openmsd.search.build_cache import corpus_root, current_build
from openmsd.search.related import Result, explain, find_paper, related_results
from openmsd.search.related_lists import stored_related

_SCORERS: dict[tuple[str, str, str], Scorer] = {}
#: each dense scorer's stored vector files when it read them
_STAMPS: weakref.WeakKeyDictionary[DenseScorer, tuple[tuple[str, int, int], ...]] = (
    weakref.WeakKeyDictionary())
_PAPERS: dict[tuple[str, str], Papers] = {}
#: each (corpus root, model)'s vector directory, an absolute path
_VECTOR_DIRS: dict[tuple[str, str], str] = {}
_LOCK = threading.Lock()
#: A member's rank among a query's candidates at or under which it "put the result there".
VOICE = 10
SIGNAL_WORDS = {"bm25": "shared words", "bm25-en": "shared English words"}


def corpus_scorer(corpus: Corpus, name: str) -> Scorer:
    """The scorer ``name`` over all of ``corpus``'s papers, built once per corpus build and
    built again when the stored vectors of one of its dense members change (``openmsd
    embed``: the members that did not change are kept)."""
    build = current_build(corpus)
    root = corpus_root(corpus)
    with _LOCK:
        key = (root, build, name)
        if key in _SCORERS and _fresh(corpus, _SCORERS[key]):
            return _SCORERS[key]
        if (root, build) not in _PAPERS:
            _PAPERS[(root, build)] = corpus_papers(corpus)
            for old in [k for k in _SCORERS if k[0] == root and k[1] != build]:
                del _SCORERS[old]  # a re-ingested corpus: the old build's rankers go
            for old_build in [k for k in _PAPERS if k[0] == root and k[1] != build]:
                del _PAPERS[old_build]
        for other in [k for k in _SCORERS if k[:2] == (root, build)]:
            if not _fresh(corpus, _SCORERS[other]):
                del _SCORERS[other]  # vectors embedded since: this and what it is part of
        # rankers of one build share their members (hybrid and hybrid-graph: one BM25)
        members = {n: s for (r, b, n), s in _SCORERS.items() if (r, b) == (root, build)}
        known = set(map(id, members.values()))
        stamps = _vectors_stamps(corpus)  # taken before the vectors are read
        make_scorer(name, _PAPERS[(root, build)], cache=members)
        for scorer in members.values():
            if isinstance(scorer, DenseScorer) and id(scorer) not in known:
                _STAMPS[scorer] = stamps.get(vectors_dir(corpus, scorer.name).name, ())
        _SCORERS[key] = members[name]
        for member, scorer in members.items():
            _SCORERS.setdefault((root, build, member), scorer)
        return _SCORERS[key]


def _vectors_stamp(corpus: Corpus, model: str) -> tuple[tuple[str, int, int], ...]:
    """The stored vector files of ``model``: names, times and sizes."""
    key = (corpus_root(corpus), model)
    directory = _VECTOR_DIRS.get(key)
    if directory is None:
        directory = _VECTOR_DIRS[key] = os.path.abspath(vectors_dir(corpus, model))
    return _files_stamp(directory)


def _files_stamp(directory: str | Path) -> tuple[tuple[str, int, int], ...]:
    try:
        files = sorted(os.scandir(directory), key=lambda f: f.name)
    except (FileNotFoundError, NotADirectoryError):
        return ()
    return tuple((f.name, f.stat().st_mtime_ns, f.stat().st_size) for f in files
                 if f.name.endswith(".parquet"))


def _vectors_stamps(corpus: Corpus) -> dict[str, tuple[tuple[str, int, int], ...]]:
    """:func:`_vectors_stamp` of every model's vector directory, by directory name."""
    root = corpus.layout.vectors
    folders = [f for f in os.scandir(root) if f.is_dir()] if root.is_dir() else []
    return {f.name: _files_stamp(Path(f.path)) for f in folders}


def _fresh(corpus: Corpus, scorer: Scorer) -> bool:
    """Whether every dense member of ``scorer`` holds the vectors stored now."""
    return all(_STAMPS.get(d) == _vectors_stamp(corpus, d.name)
               for d in dense_members(scorer) if d.papers.corpus is not None)


def dense_members(scorer: Scorer) -> list[DenseScorer]:
    """The dense scorers a ranker is made of (itself, a fusion's members, the scorer inside a
    ``NAME@LANG``)."""
    if isinstance(scorer, DenseScorer):
        return [scorer]
    inner = list(getattr(scorer, "members", [])) or [getattr(scorer, "inner", None)]
    return [d for m in inner if m is not None for d in dense_members(m)]


def built_scorer(corpus: Corpus, name: str) -> Scorer | None:
    """What :func:`corpus_scorer` would answer at once (built for the current build, its
    dense members' vectors unchanged), else None."""
    try:
        build = current_build(corpus)
    except CorpusError:
        return None
    scorer = _SCORERS.get((corpus_root(corpus), build, name))
    return scorer if scorer is not None and _fresh(corpus, scorer) else None


def is_built(corpus: Corpus, name: str) -> bool:
    """Whether :func:`corpus_scorer` would answer at once."""
    return built_scorer(corpus, name) is not None


def allowed(corpus: Corpus, papers: Papers, languages: Sequence[str] | None,
            years: tuple[int | None, int | None] | None) -> np.ndarray | None:
    """The rows of ``papers`` in ``languages`` and the year range (None: every row)."""
    if not languages and not years:
        return None
    low, high = years or (None, None)
    rows = corpus.connect().execute(
        "SELECT paper_id FROM papers WHERE (? IS NULL OR list_contains(?, language)) "
        "AND (? IS NULL OR year >= ?) AND (? IS NULL OR year <= ?)",
        [list(languages) if languages else None, list(languages or []), low, low, high,
         high]).fetchall()
    mask = np.zeros(len(papers), bool)
    for (paper_id,) in rows:
        i = papers.position.get(paper_id)
        if i is not None:
            mask[i] = True
    return mask


def member_words(scorer: Scorer) -> dict[str, str]:
    """What a fusion's members say of a result they rank high, where it is not the plain
    "similar text" (an adapter says it learned from the corpus's citations)."""
    return {m.name: m.words for m in getattr(scorer, "members", ())
            if getattr(m, "words", "similar text") != "similar text"}


def signals(contributions: Sequence[Contribution],
            words_of: Mapping[str, str] | None = None) -> list[str]:
    """The text signals that ranked a result among a query's first :data:`VOICE`, and what
    the members that say it in words saw ("3 shared references, 2 outside the corpus");
    ``words_of``: a member's own words (:func:`member_words`)."""
    out = []
    for c in contributions:
        if c.detail:
            words = c.detail
        elif c.signal != "text" or c.rank is None or c.rank > VOICE:
            continue
        else:
            words = (words_of or {}).get(c.member) or SIGNAL_WORDS.get(
                RankerSpec.parse(c.member).model, "similar text")
        if words not in out:
            out.append(words)
    return out


def why(said: Sequence[str], linked: Sequence[str]) -> list[str]:
    """A result's reasons: the members' ``said`` (:func:`signals`), then its citation links
    (:func:`openmsd.search.related.explain`), whose in-corpus shared references give way to
    a member's count through every reference.

    >>> why(["similar text", "3 shared references, 2 outside the corpus"],
    ...     ["1 shared reference", "co-cited 2 times"])
    ['similar text', '3 shared references, 2 outside the corpus', 'co-cited 2 times']
    """
    counted = any("shared reference" in s for s in said)
    return [*said, *(w for w in linked if not (counted and "shared reference" in w))]


def capped(k: int, papers: int) -> int:
    """``k`` no larger than the corpus (``papers``): a ``-k`` of 10^20 ranks every paper once,
    never allocates ``k`` slots per query.

    >>> capped(99999999999999999999, 2100), capped(5, 2100), capped(5, 0)
    (2100, 5, 1)
    """
    return max(1, min(k, papers))


def _ranked(corpus: Corpus, scorer: Scorer, queries: Queries, k: int,
            mask: np.ndarray | None, query_id: str | None) -> list[Result]:
    said: list[list[Contribution]] = []
    k = capped(k, len(scorer.papers.ids))
    if isinstance(scorer, Fusion):
        rows, scores, explained = scorer.top_k_explained(queries, k, mask)
        said = explained[0]
    else:
        rows, scores = scorer.top_k(queries, k, mask)
    found = [(int(r), float(s)) for r, s in zip(rows[0], scores[0], strict=True) if r >= 0]
    results = related_results(corpus, [(scorer.papers.ids[r], s) for r, s in found])
    explain(corpus, query_id, results)
    words_of = member_words(scorer)
    for result, contributions in zip(results, said, strict=False):
        result.why = why(signals(contributions, words_of), result.why)
    return results


def rank_related(corpus: Corpus, key: str, ranker: str = HYBRID_GRAPH, k: int = 10,
                 languages: list[str] | None = None,
                 years: tuple[int | None, int | None] | None = None) -> list[Result]:
    """The ``k`` papers ``ranker`` ranks first for paper ``key`` (never the paper itself); a
    paper without text still gets graph results, one without links text results."""
    paper_id = find_paper(corpus, key)
    scorer = corpus_scorer(corpus, ranker)
    k = capped(k, len(scorer.papers.ids))
    row = scorer.papers.position[paper_id]
    stored = (stored_related(corpus, ranker, scorer)
              if not languages and not years and isinstance(scorer, Fusion) else None)
    if stored is not None and k <= stored.depth:  # computed once per build: a lookup
        found = [(int(r), float(s)) for r, s in zip(stored.rows[row, :k],
                                                    stored.scores[row, :k], strict=True)
                 if r >= 0]
        results = related_results(corpus, [(scorer.papers.ids[r], s) for r, s in found])
        explain(corpus, paper_id, results)
        for result, code in zip(results, stored.signals[row], strict=False):
            result.why = why(stored.signal_sets[code], result.why)
        return results
    queries = Queries.of_rows(scorer.papers, [row])
    return _ranked(corpus, scorer, queries, k,
                   allowed(corpus, scorer.papers, languages, years), paper_id)


def rank_search(corpus: Corpus, text: str, ranker: str | Scorer = HYBRID, k: int = 10,
                languages: list[str] | None = None,
                years: tuple[int | None, int | None] | None = None,
                vectors: dict[str, np.ndarray] | None = None) -> list[Result]:
    """The ``k`` papers ``ranker`` (a name, or the scorer :func:`corpus_scorer` gave for
    one) ranks first for a free ``text``; ``vectors``: the text's query vector (one row) for
    dense members that have it already (a server's batching encoder), by member name."""
    if not text.strip():
        raise ValueError("search: the query text is empty")
    scorer = corpus_scorer(corpus, ranker) if isinstance(ranker, str) else ranker
    queries = Queries.of_texts([text])
    queries.vectors.update(vectors or {})
    return _ranked(corpus, scorer, queries, k,
                   allowed(corpus, scorer.papers, languages, years), None)
