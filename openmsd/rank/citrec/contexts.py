"""Candidate papers' contexts for MP-BERT4CR's citation encoder: each paper's title + abstract
sentences and body sentences, split once, and the context a model reads of them."""

from __future__ import annotations

import random

from openmsd.models import paper_context, split_sentences

__all__ = ["PaperContexts"]


class PaperContexts:
    """Each candidate's (title + abstract sentences, body sentences), split once."""

    def __init__(self, papers: dict[str, tuple[str, str | None]]):
        self.papers = papers
        self.cache: dict[str, tuple[list[str], list[str]]] = {}

    def sentences(self, paper_id: str) -> tuple[list[str], list[str]]:
        if paper_id not in self.cache:
            head, body = self.papers[paper_id]
            self.cache[paper_id] = (split_sentences(head) or [head],
                                    split_sentences(body) if body else [])
        return self.cache[paper_id]

    def drawable(self, paper_id: str, fundamental: int, supplemental: int) -> list[str]:
        """Every sentence a context of the paper can hold."""
        head, body = self.sentences(paper_id)
        return head[:fundamental] + (body if supplemental else [])

    def context(self, paper_id: str, fundamental: int, supplemental: int,
                rng: random.Random | None = None) -> list[str]:
        head, body = self.sentences(paper_id)
        return paper_context(head, body, fundamental, supplemental, rng)
