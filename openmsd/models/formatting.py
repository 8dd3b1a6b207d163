"""The text a paper is embedded from, as OpenMSD formats it.

>>> paper_input("Un analyseur", "Nous présentons un analyseur.")
'Title: Un analyseur. Abstract: Nous présentons un analyseur.'
>>> paper_input("Un analyseur", "Nous présentons...", summary="We present a parser.")
'Title: Un analyseur. Abstract: (We present a parser.) Nous présentons...'
>>> paper_input(None, "Only an abstract.")
'Abstract: Only an abstract.'
"""

from __future__ import annotations


def paper_input(title: str | None, abstract: str | None, summary: str | None = None) -> str:
    """``Title: {title}. Abstract: ({English summary}) {abstract}``, leaving out what is
    missing; an empty string when the paper has no text at all."""
    parts = []
    if title and title.strip():
        parts.append(f"Title: {title.strip().rstrip('.')}.")
    body = " ".join(p for p in (f"({summary.strip()})" if summary and summary.strip() else "",
                                (abstract or "").strip()) if p)
    if body:
        parts.append(f"Abstract: {body}")
    return " ".join(parts)
