"""The 32 textual neighbours of Singh & Singh (Table 1), grouped in their five categories.

A neighbour is a named, seeded function from a paper's tagged title and abstract (spaCy
documents, :mod:`openmsd.robustness.tagging`) to a new (title, abstract). Codes read
``Txx_Ayy_zz``: ``xx`` edits the title, ``yy`` the abstract, ``zz`` both; a missing ``T`` or
``A`` means that field is dropped. Categories: orthography lossless (LL) or lossy (LO) ×
semantics highly similar (HS), partially similar (PS) or dissimilar (DS).

Where the paper is silent, the authors' ``scripts/corruption_techniques.py`` decided: the
rotation moves the second half of the sentences (from ``n // 2``) to the front; sorting is by
words per sentence; random deletion removes ``int(0.3 · words)`` words; the top noun phrases are
the better half by ``tf · log2(1 + (N − df + 0.5) / (df + 0.5))`` over all abstracts; nouns longer
than 3 characters lose 1 character (2 when longer than 5); ``TRepNNA_A`` appends the most frequent
half of the abstract's distinct nouns; an adjective's antonym is WordNet's most frequent one.
Two choices differ: quantiles are the three near-equal thirds of the sentences
(``numpy.array_split``; the authors' ``n // 3`` leaves the last ``n mod 3`` sentences in no
quantile), and noun phrases are spaCy noun chunks headed by a noun (TextBlob's in the paper).
"Nouns" (NN) are spaCy's ``NOUN`` and ``PROPN``, "verbs" ``VERB`` and ``AUX`` (NLTK's universal
tags, which the paper used, put both in each).

>>> from openmsd.robustness.tagging import tag
>>> title, abstract = tag(["Deep models", "Models are deep. We train them."], "en")
>>> result = apply(NEIGHBOURS["T_ARot"], title, abstract, "p1", seed=0)
>>> result.status, result.abstract
('ok', 'We train them. Models are deep.')
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from math import log2

import numpy as np
import pandas as pd
from rich.progress import track
from spacy.tokens import Doc, Span, Token

from openmsd.robustness.tagging import has_tags, tag

CATEGORIES = ("LL-HS", "LO-HS", "LL-PS", "LO-PS", "LO-DS")
"""The five categories, in the paper's order of decreasing semantic similarity."""
NOUN = frozenset({"NOUN", "PROPN"})
POS = {"ADJ": frozenset({"ADJ"}), "NN": NOUN, "VB": frozenset({"VERB", "AUX"}),
       "ADV": frozenset({"ADV"}), "PR": frozenset({"PRON"}), "DT": frozenset({"DET"}),
       "Num": frozenset({"NUM"})}
"""The part-of-speech groups the neighbour codes name, as spaCy universal tags."""


@dataclass(frozen=True)
class Resources:
    """What some neighbours need beyond the paper: the top-50% noun phrases of the paper set
    (lower-cased) and an adjective → antonym table for the paper's language."""

    top_noun_phrases: frozenset[str] = frozenset()
    antonyms: Mapping[str, str] = field(default_factory=dict)


Make = Callable[[Doc, Doc, random.Random, Resources], tuple[str, str]]


@dataclass(frozen=True)
class Neighbour:
    """One neighbour type: its code, category, the paper's description, what it needs
    (``tags``: a part-of-speech tagger; ``antonyms``: an antonym table) and its function."""

    code: str
    category: str
    form: str
    needs: frozenset[str]
    make: Make


@dataclass(frozen=True)
class Outcome:
    """A neighbour applied to one paper. ``status``: ``ok`` (a new text), ``unchanged`` (the
    function found nothing to change, e.g. no adjective: not a neighbour), ``empty`` (nothing
    but punctuation left), ``skipped`` (the language lacks what the neighbour needs)."""

    status: str
    title: str = ""
    abstract: str = ""


# -- text functions -------------------------------------------------------------------------

def _tidy(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _join(tokens: Iterable[Token | str]) -> str:
    """Tokens (or replacement strings already carrying their whitespace) back into text."""
    return _tidy("".join(t if isinstance(t, str) else t.text_with_ws for t in tokens))


def _is_word(token: Token) -> bool:
    return not (token.is_punct or token.is_space)


def _sentences(doc: Doc) -> list[str]:
    return [s.text.strip() for s in doc.sents if s.text.strip()]


def _n_words(span: Span) -> int:
    return sum(_is_word(t) for t in span)


def _without(doc: Doc, drop: Callable[[Token], bool]) -> str:
    """The text without the dropped tokens; each leaves its trailing whitespace ("82%" → "82")."""
    return _join(t.whitespace_ if drop(t) else t for t in doc)


def _without_pos(doc: Doc, group: str) -> str:
    tags = POS[group]
    return _without(doc, lambda t: t.pos_ in tags)


def _recase(doc: Doc, nouns: bool) -> str:
    """Upper-case the nouns (``nouns=True``) or every other token."""
    return _join((t.text.upper() + t.whitespace_) if (t.pos_ in NOUN) == nouns else t
                 for t in doc)


def _noun_chunks(doc: Doc) -> list[Span]:
    return [c for c in doc.noun_chunks if c.root.pos_ in NOUN]


def _without_chunks(doc: Doc, keep: Callable[[Span], bool]) -> str:
    dropped = {i for c in _noun_chunks(doc) if not keep(c) for i in range(c.start, c.end)}
    return _without(doc, lambda t: t.i in dropped)


def _drop_chars(word: str, rng: random.Random) -> str:
    if len(word) <= 3:
        return word
    for _ in range(2 if len(word) > 5 else 1):
        at = rng.randrange(len(word))
        word = word[:at] + word[at + 1:]
    return word


def _with_antonyms(doc: Doc, antonyms: Mapping[str, str]) -> str:
    def swap(token: Token) -> Token | str:
        antonym = antonyms.get(token.lower_) if token.pos_ == "ADJ" else None
        if antonym is None:
            return token
        if token.text[:1].isupper():
            antonym = antonym[:1].upper() + antonym[1:]
        return antonym + token.whitespace_
    return _join(swap(t) for t in doc)


def _inflate_whitespace(text: str, rng: random.Random) -> str:
    spaces = [m.start() for m in re.finditer(" ", text)]
    chosen = set(rng.sample(spaces, len(spaces) // 2))
    return "".join(" " * rng.randint(2, 5) if i in chosen else c for i, c in enumerate(text))


# -- the 32 functions, in the order of Table 1 ------------------------------------------------

def rotate(t: Doc, a: Doc, rng: random.Random, res: Resources) -> tuple[str, str]:
    """T_ARot: the second half of the abstract's sentences (from ``n // 2``) moves first."""
    s = _sentences(a)
    mid = len(s) // 2
    return t.text, " ".join(s[mid:] + s[:mid])


def shuffle(t: Doc, a: Doc, rng: random.Random, res: Resources) -> tuple[str, str]:
    """T_AShuff: the abstract's sentences in a random order other than the original."""
    s = _sentences(a)
    order = list(range(len(s)))
    if len(s) > 1:
        while order == sorted(order):
            rng.shuffle(order)
    return t.text, " ".join(s[i] for i in order)


def sort_ascending(t: Doc, a: Doc, rng: random.Random, res: Resources) -> tuple[str, str]:
    """T_ASortAsc: the abstract's sentences from fewest to most words (stable)."""
    return t.text, " ".join(s.text.strip() for s in sorted(a.sents, key=_n_words))


def sort_descending(t: Doc, a: Doc, rng: random.Random, res: Resources) -> tuple[str, str]:
    """T_ASortDesc: the abstract's sentences from most to fewest words (stable)."""
    return t.text, " ".join(s.text.strip() for s in sorted(a.sents, key=lambda s: -_n_words(s)))


def delete_random(t: Doc, a: Doc, rng: random.Random, res: Resources) -> tuple[str, str]:
    """T_ADelRand: 30% of the abstract's words (``int(0.3 · n)``), drawn at random, deleted."""
    words = [tok.i for tok in a if _is_word(tok)]
    gone = set(rng.sample(words, int(0.3 * len(words))))
    return t.text, _without(a, lambda tok: tok.i in gone)


def _delete_abstract_pos(group: str) -> Make:
    def make(t: Doc, a: Doc, rng: random.Random, res: Resources) -> tuple[str, str]:
        return t.text, _without_pos(a, group)
    make.__doc__ = f"T_ADel{group}: every {group} of the abstract deleted."
    return make


def _delete_title_pos(group: str, keep_abstract: bool = True) -> Make:
    def make(t: Doc, a: Doc, rng: random.Random, res: Resources) -> tuple[str, str]:
        return _without_pos(t, group), a.text if keep_abstract else ""
    make.__doc__ = (f"TDel{group}_A: every {group} of the title deleted." if keep_abstract else
                    f"TDel{group}: every {group} of the title deleted, the abstract dropped.")
    return make


def delete_noun_phrases(t: Doc, a: Doc, rng: random.Random, res: Resources) -> tuple[str, str]:
    """T_ADelNNPH: every noun phrase of the abstract deleted."""
    return t.text, _without_chunks(a, keep=lambda c: False)


def delete_top_noun_phrases(t: Doc, a: Doc, rng: random.Random,
                            res: Resources) -> tuple[str, str]:
    """T_ADelTopNNPH: the abstract's noun phrases that rank in the top 50% of the paper set
    (:func:`top_noun_phrases`) deleted."""
    return t.text, _without_chunks(a, keep=lambda c: c.text.lower() not in res.top_noun_phrases)


def _delete_quantile(q: int) -> Make:
    def make(t: Doc, a: Doc, rng: random.Random, res: Resources) -> tuple[str, str]:
        s = _sentences(a)
        if len(s) < 3:
            return t.text, a.text
        drop = set(np.array_split(np.arange(len(s)), 3)[q - 1].tolist())
        return t.text, " ".join(x for i, x in enumerate(s) if i not in drop)
    make.__doc__ = f"T_ADelQ{q}: the {q}. third of the abstract's sentences deleted (≥ 3 needed)."
    return make


def _recase_field(field_: str, nouns: bool) -> Make:
    def make(t: Doc, a: Doc, rng: random.Random, res: Resources) -> tuple[str, str]:
        return (_recase(t, nouns), a.text) if field_ == "title" else (t.text, _recase(a, nouns))
    which = "nouns" if nouns else "non-nouns"
    make.__doc__ = f"The {which} of the {field_} upper-cased."
    return make


def delete_noun_chars(t: Doc, a: Doc, rng: random.Random, res: Resources) -> tuple[str, str]:
    """T_A_DelNNChar: each noun of title and abstract longer than 3 characters loses 1 random
    character, 2 when longer than 5."""
    def edit(doc: Doc) -> str:
        return _join((_drop_chars(tok.text, rng) + tok.whitespace_) if tok.pos_ in NOUN else tok
                     for tok in doc)
    return edit(t), edit(a)


def repeat_title_noun(t: Doc, a: Doc, rng: random.Random, res: Resources) -> tuple[str, str]:
    """TRepNNT_A: one noun of the title, drawn at random, said twice."""
    nouns = [tok.i for tok in t if tok.pos_ in NOUN]
    if not nouns:
        return t.text, a.text
    twice = rng.choice(nouns)
    return _join((tok.text + " " + tok.text_with_ws) if tok.i == twice else tok
                 for tok in t), a.text


def add_abstract_nouns(t: Doc, a: Doc, rng: random.Random, res: Resources) -> tuple[str, str]:
    """TRepNNA_A: the most frequent half (at least one) of the abstract's distinct nouns
    appended to the title."""
    counts = Counter(tok.text for tok in a if tok.pos_ in NOUN)
    if not counts:
        return t.text, a.text
    top = [w for w, _ in counts.most_common(max(1, len(counts) // 2))]
    return _tidy(t.text + " " + " ".join(top)), a.text


def keep_nouns(t: Doc, a: Doc, rng: random.Random, res: Resources) -> tuple[str, str]:
    """T_ADelNonNNs: only the abstract's nouns are kept, space-separated."""
    return t.text, " ".join(tok.text for tok in a if tok.pos_ in NOUN)


def antonyms(t: Doc, a: Doc, rng: random.Random, res: Resources) -> tuple[str, str]:
    """T_ARepADJ: each adjective of the abstract that has an antonym replaced by it."""
    return t.text, _with_antonyms(a, res.antonyms)


def whitespace(t: Doc, a: Doc, rng: random.Random, res: Resources) -> tuple[str, str]:
    """T_A_WS: half of the spaces (drawn at random) in title and abstract become 2-5 spaces."""
    return _inflate_whitespace(t.text, rng), _inflate_whitespace(a.text, rng)


_TAGS = frozenset({"tags"})
_NONE: frozenset[str] = frozenset()
_P, _A, _PA = "Title → Preserve", "Abs → Preserve", "Title → Preserve; Abs → "
NEIGHBOURS: dict[str, Neighbour] = {n.code: n for n in [
    Neighbour("T_ARot", "LL-PS", _PA + "Rotate", _NONE, rotate),
    Neighbour("T_AShuff", "LL-PS", _PA + "Shuffle", _NONE, shuffle),
    Neighbour("T_ASortAsc", "LL-PS", _PA + "Sort Ascending", _NONE, sort_ascending),
    Neighbour("T_ASortDesc", "LL-PS", _PA + "Sort Descending", _NONE, sort_descending),
    Neighbour("T_ADelRand", "LO-PS", _PA + "Random word deletion 30%", _NONE, delete_random),
    Neighbour("T_ADelADJ", "LO-PS", _PA + "Delete all ADJs", _TAGS, _delete_abstract_pos("ADJ")),
    Neighbour("T_ADelNN", "LO-DS", _PA + "Delete all NNs", _TAGS, _delete_abstract_pos("NN")),
    Neighbour("T_ADelVB", "LO-PS", _PA + "Delete all Verbs", _TAGS, _delete_abstract_pos("VB")),
    Neighbour("T_ADelADV", "LO-PS", _PA + "Delete all ADVs", _TAGS, _delete_abstract_pos("ADV")),
    Neighbour("T_ADelPR", "LO-PS", _PA + "Delete all PRs", _TAGS, _delete_abstract_pos("PR")),
    Neighbour("T_ADelDT", "LO-HS", _PA + "Delete all DTs", _TAGS, _delete_abstract_pos("DT")),
    Neighbour("T_ADelNum", "LO-PS", _PA + "Delete all Numbers", _TAGS,
              _delete_abstract_pos("Num")),
    Neighbour("T_ADelNNPH", "LO-DS", _PA + "Delete all NN Phrases", _TAGS, delete_noun_phrases),
    Neighbour("T_ADelTopNNPH", "LO-PS", _PA + "Delete top 50% NPs", _TAGS,
              delete_top_noun_phrases),
    Neighbour("TDelADJ_A", "LO-HS", "Title → Delete all ADJs; " + _A, _TAGS,
              _delete_title_pos("ADJ")),
    Neighbour("TDelNN_A", "LO-HS", "Title → Delete all NNs; " + _A, _TAGS,
              _delete_title_pos("NN")),
    Neighbour("TDelVB_A", "LO-HS", "Title → Delete all VBs; " + _A, _TAGS,
              _delete_title_pos("VB")),
    Neighbour("TDelDT_A", "LO-HS", "Title → Delete all DTs; " + _A, _TAGS,
              _delete_title_pos("DT")),
    Neighbour("TDelNN", "LO-DS", "Title → Delete all NNs; Abs → Delete", _TAGS,
              _delete_title_pos("NN", keep_abstract=False)),
    Neighbour("T_ADelQ1", "LO-PS", _PA + "Delete quantile 1", _NONE, _delete_quantile(1)),
    Neighbour("T_ADelQ2", "LO-PS", _PA + "Delete quantile 2", _NONE, _delete_quantile(2)),
    Neighbour("T_ADelQ3", "LO-PS", _PA + "Delete quantile 3", _NONE, _delete_quantile(3)),
    Neighbour("TNNU_A", "LL-HS", "Title → Uppercase NNs; " + _A, _TAGS,
              _recase_field("title", nouns=True)),
    Neighbour("TNonNNU_A", "LL-HS", "Title → Uppercase non NNs; " + _A, _TAGS,
              _recase_field("title", nouns=False)),
    Neighbour("T_ANNU", "LL-HS", _PA + "Uppercase NNs", _TAGS,
              _recase_field("abstract", nouns=True)),
    Neighbour("T_ANonNNU", "LL-HS", _PA + "Uppercase non NNs", _TAGS,
              _recase_field("abstract", nouns=False)),
    Neighbour("T_A_DelNNChar", "LO-PS", "Title → Delete chars from NNs; Abs → Delete chars "
              "from NNs", _TAGS, delete_noun_chars),
    Neighbour("TRepNNT_A", "LO-HS", "Title → Add a NN from title; " + _A, _TAGS,
              repeat_title_noun),
    Neighbour("TRepNNA_A", "LO-HS", "Title → Add a NN from abs; " + _A, _TAGS,
              add_abstract_nouns),
    Neighbour("T_ADelNonNNs", "LO-DS", _PA + "Delete all non NNs", _TAGS, keep_nouns),
    Neighbour("T_ARepADJ", "LO-DS", _PA + "Replace ADJs with antonyms",
              frozenset({"tags", "antonyms"}), antonyms),
    Neighbour("T_A_WS", "LL-HS", "Randomly replace 50% whitespace chars with 2-5 whitespace "
              "chars in the title & abstract", _NONE, whitespace),
]}


def by_category() -> dict[str, list[str]]:
    """The neighbour codes of each category, categories in :data:`CATEGORIES` order."""
    return {c: [n.code for n in NEIGHBOURS.values() if n.category == c] for c in CATEGORIES}


# -- applying them --------------------------------------------------------------------------

def rng_for(seed: int, code: str, paper_id: str) -> random.Random:
    """The random source of one neighbour on one paper: the same whatever else is run."""
    return random.Random(f"{seed}/{code}/{paper_id}")


def missing(neighbour: Neighbour, title: Doc, abstract: Doc, res: Resources) -> list[str]:
    """What the neighbour needs and this paper's language does not have."""
    lacking = []
    if "tags" in neighbour.needs and not (has_tags(title) and has_tags(abstract)):
        lacking.append("tags")
    if "antonyms" in neighbour.needs and not res.antonyms:
        lacking.append("antonyms")
    return lacking


def apply(neighbour: Neighbour, title: Doc, abstract: Doc, paper_id: str, seed: int = 0,
          res: Resources | None = None) -> Outcome:
    """One neighbour of one paper, with its :class:`Outcome` status."""
    res = res or Resources()
    if missing(neighbour, title, abstract, res):
        return Outcome("skipped")
    new_title, new_abstract = neighbour.make(title, abstract, rng_for(seed, neighbour.code,
                                                                      paper_id), res)
    if not re.search(r"\w", new_title + new_abstract):
        return Outcome("empty", new_title, new_abstract)
    if (new_title, new_abstract) == (title.text, abstract.text):
        return Outcome("unchanged", new_title, new_abstract)
    return Outcome("ok", new_title, new_abstract)


def top_noun_phrases(abstracts: Sequence[Doc]) -> frozenset[str]:
    """The better half of the distinct noun phrases (lower-cased) of a paper set by
    ``tf · log2(1 + (N − df + 0.5) / (df + 0.5))``, as the authors ranked them."""
    tf: Counter[str] = Counter()
    df: Counter[str] = Counter()
    for doc in abstracts:
        phrases = [c.text.lower() for c in _noun_chunks(doc)] if has_tags(doc) else []
        tf.update(phrases)
        df.update(set(phrases))
    n = len(abstracts)
    scores = {p: tf[p] * log2(1 + (n - df[p] + 0.5) / (df[p] + 0.5)) for p in tf}
    ranked = sorted(scores, key=lambda p: (-scores[p], p))
    return frozenset(ranked[:len(ranked) // 2])


@cache
def load_antonyms(language: str | None) -> Mapping[str, str]:
    """The adjective → antonym table of a language shipped in ``robustness/data``
    (``antonyms-<lang>.tsv``, made by ``scripts/wordnet_antonyms.py``); empty when none."""
    path = resources.files("openmsd.robustness") / "data" / f"antonyms-{language}.tsv"
    if not language or not path.is_file():
        return {}
    table = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            word, antonym = line.split("\t")
            table[word] = antonym
    return table


TABLE_COLUMNS = ["paper", "code", "category", "status", "title", "abstract"]


def neighbour_table(papers: pd.DataFrame, seed: int = 0, codes: Sequence[str] | None = None,
                    progress: bool = False) -> pd.DataFrame:
    """Every neighbour of every paper (``paper_id``, ``title``, ``abstract``, ``language``
    columns; row position = ``paper``): one row per (paper, code) with its status and text.
    Papers are tagged once per language; the top noun phrases are ranked per language."""
    chosen = [NEIGHBOURS[c] for c in (codes or NEIGHBOURS)]
    rows: list[tuple[int, str, str, str, str, str]] = []
    languages = papers["language"].fillna("").astype(str)
    for key in sorted(set(languages)):
        language = key or None
        where = np.flatnonzero((languages == key).to_numpy())
        titles = list(tag(papers["title"].iloc[where].tolist(), language))
        abstracts = list(tag(papers["abstract"].iloc[where].tolist(), language))
        res = Resources(top_noun_phrases(abstracts), load_antonyms(language))
        items = zip(where.tolist(), titles, abstracts, strict=True)
        for i, title, abstract in (track(items, total=len(where), description=f"neighbours "
                                         f"({language or 'unknown language'})")
                                   if progress else items):
            paper_id = str(papers["paper_id"].iat[i])
            for neighbour in chosen:
                outcome = apply(neighbour, title, abstract, paper_id, seed, res)
                rows.append((i, neighbour.code, neighbour.category, outcome.status,
                             outcome.title, outcome.abstract))
    table = pd.DataFrame(rows, columns=TABLE_COLUMNS)
    order = {c.code: k for k, c in enumerate(chosen)}
    return table.sort_values(["paper", "code"], key=lambda s: s.map(order) if s.name == "code"
                             else s, kind="stable").reset_index(drop=True)
