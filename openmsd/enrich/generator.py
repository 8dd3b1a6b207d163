"""The interface every summary backend implements, and what one generation returns.

A backend turns passages into English text for one *task* of :mod:`openmsd.enrich.prompts`
(``summary64``, ``summary128``, ``translate``). It formats the task's instruction its own way
(few-shot completion for a base model, a chat message for an endpoint) and returns one
:class:`Generated` per passage, in order: the text, or the reason it failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Generated:
    """One backend answer: ``text`` (None when it failed, with ``error`` saying why) and the
    number of tokens the backend generated (its own tokenizer's count)."""

    text: str | None
    tokens: int = 0
    error: str | None = None


class GeneratorError(RuntimeError):
    """A backend that cannot be used at all (not installed, unreachable): the run stops."""


class Generator(Protocol):
    """A backend: ``name`` (stored with every summary it wrote), the ``tasks`` it can do and
    the source ``languages`` it reads (None: any), and :meth:`generate`."""

    name: str
    tasks: frozenset[str]
    languages: frozenset[str] | None

    def generate(self, task: str, passages: Sequence[str], languages: Sequence[str | None],
                 max_new_tokens: int, temperature: float = 0.0) -> list[Generated]:
        """One :class:`Generated` per passage (``languages``: each passage's ISO 639-1 code)."""
        ...
