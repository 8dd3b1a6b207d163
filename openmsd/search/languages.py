"""The one check of a language filter that the command line and the web API share: a filter
no paper can pass is an error naming it and the corpus's languages
(:func:`openmsd.corpus.corpus_languages`)."""

from __future__ import annotations

from openmsd.corpus import Corpus, corpus_languages

__all__ = ["language_problem"]


def language_problem(corpus: Corpus, languages: list[str] | None) -> str | None:
    """Why a filter on ``languages`` can give no result (no paper of the corpus is in any of
    them), naming them and the corpus's languages; None when some paper passes it (or no
    filter).

    >>> language_problem(Corpus("/nowhere"), None) is None
    True
    """
    if not languages:
        return None
    held = corpus_languages(corpus)
    if set(languages) & set(held):
        return None
    asked = ", ".join(repr(language) for language in languages)
    return (f"no paper of {corpus.root} is in {asked}; its languages: "
            f"{', '.join(held) or 'none'}")
