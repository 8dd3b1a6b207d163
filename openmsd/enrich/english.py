"""Is a generated summary English? CLD3, the corpus's language identifier, must say so
reliably; empty, too short or other-language output is rejected with the reason.

>>> rejection(["We present a parser for French and evaluate it on two corpora.",
...            "Nous présentons un analyseur syntaxique du français.", ""])
[None, 'not English (fr)', 'empty']
"""

from __future__ import annotations

from collections.abc import Sequence

from openmsd.corpus import UND, LanguageIdentifier, identify


def rejection(texts: Sequence[str | None], identifier: LanguageIdentifier | None = None
              ) -> list[str | None]:
    """Per text: None when it is English, else why it is rejected."""
    found = identify([t or "" for t in texts], identifier=identifier)
    reasons: list[str | None] = []
    for text, (language, _) in zip(texts, found, strict=True):
        if not text or not text.strip():
            reasons.append("empty")
        elif language in (None, UND):
            reasons.append("language not identified (too short or mixed)")
        elif language != "en":
            reasons.append(f"not English ({language})")
        else:
            reasons.append(None)
    return reasons
