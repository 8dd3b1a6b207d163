"""A ranker name as a value: :class:`RankerSpec`, parsed by :func:`parse` and printed by
``str()``.

The grammar (``[...]``: optional, ``{...}``: repeated)::

    ranker   := member {"+" member}
    member   := [weight "*"] model [":" backend] ["@" language] {"~" modifier}
    model    := a name (registered, a directory, a Hugging Face name, a scorer such as
                bm25 or hybrid), with an enrichment "+" variant (e5-small-multilingual+llm64)
    backend  := torch | onnx | onnx-q4 | onnx-sq8 | onnx-fp32 | cuda-fp16
                (openmsd.vectors.BACKENDS)
    language := same | cross | a language code (en, pt, ...)
    modifier := prf | links

* ``A+B``: the fusion of ``A`` and ``B``; ``0.7*A+0.3*B`` gives it weights (all or none);
* ``MODEL+llm64`` (``author``, ``topn`` or ``llm`` and a length): ``MODEL`` over texts enriched
  with summaries (:func:`openmsd.corpus.parse_enriched`): one member, not a fusion;
* ``NAME:onnx``: the vectors ``onnx`` made; stored as ``vectors/NAME@onnx``
  (:func:`openmsd.vectors.vector_key`: the on-disk name, :attr:`RankerSpec.vector_key`). A tail is
  a backend only when it is one, so ``two-stage:MODEL`` and paths keep their colon;
* ``NAME@LANG``: heard only for pairs in ``LANG`` (``same``: one language, ``cross``: two);
* ``NAME~prf``, ``NAME~links``: pseudo-relevance feedback, scores carried over the citation
  graph (:mod:`openmsd.rank.feedback`), applied left to right.

The old spelling of a backend, ``NAME@onnx`` (and ``NAME@onnx@en``), parses to the same spec;
:func:`parse` with ``typed=True`` (a name a user typed) says so on stderr, once per name.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, replace

from openmsd.vectors import BACKENDS, vector_key

__all__ = ["LANGUAGES", "MODIFIERS", "RankerSpec", "RankerSpecError", "UnknownScorerError",
           "parse"]

#: The modifiers a member can carry (``NAME~prf``), in the order they are written.
MODIFIERS = ("prf", "links")
#: The language restrictions that are not a language code.
LANGUAGES = ("same", "cross")
_LANGUAGE = re.compile(r"[A-Za-z]{2,3}([-_][A-Za-z0-9]+)?|same|cross")
_ENRICHMENT = re.compile(r"(author|topn|llm)\d+")
_ENRICHED_TAIL = re.compile(r"(author|topn|llm)\d+([:@~].*)?")
_WEIGHT = re.compile(r"(?P<weight>[0-9]*\.?[0-9]+(e-?[0-9]+)?)\*(?P<rest>.+)")
_warned: set[str] = set()


class UnknownScorerError(ValueError):
    """A ranker name that names nothing this collection can have."""


class RankerSpecError(UnknownScorerError):
    """A ranker name that does not follow the grammar; the message names the bad part."""


@dataclass(frozen=True)
class RankerSpec:
    """One ranker: a single ``model`` (with its ``enrichment``, ``backend``, ``language`` and
    ``modifiers``), or a fusion of ``members`` (``model`` empty) with optional ``weights``.

    >>> spec = parse("minilm-en:onnx@en~prf")
    >>> spec.model, spec.backend, spec.language, spec.modifiers
    ('minilm-en', 'onnx', 'en', ('prf',))
    >>> spec.vector_key, str(spec.bare), str(spec.inner)
    ('minilm-en@onnx', 'minilm-en:onnx', 'minilm-en:onnx@en')
    """

    model: str = ""
    enrichment: str | None = None
    backend: str | None = None
    language: str | None = None
    modifiers: tuple[str, ...] = ()
    members: tuple[RankerSpec, ...] = ()
    weights: tuple[float, ...] | None = None

    @classmethod
    def parse(cls, text: str, *, typed: bool = False) -> RankerSpec:
        """:func:`parse`."""
        return parse(text, typed=typed)

    @property
    def is_fusion(self) -> bool:
        """Whether this is a fusion of several members (``A+B``)."""
        return bool(self.members)

    @property
    def stored_model(self) -> str:
        """The model with its enrichment (``e5-small-multilingual+llm64``): the name
        ``openmsd embed`` stores vectors of."""
        return f"{self.model}+{self.enrichment}" if self.enrichment else self.model

    @property
    def vector_key(self) -> str:
        """The on-disk name of this member's vectors and index (``NAME@onnx``; without a
        backend, the model's own name: :func:`openmsd.vectors.vector_key`).

        >>> parse("e5-small-multilingual+llm64:onnx@same").vector_key
        'e5-small-multilingual+llm64@onnx'
        """
        if self.is_fusion:
            raise RankerSpecError(f"{self}: a fusion has no vector key")
        return vector_key(self.stored_model, self.backend or "torch")

    @property
    def bare(self) -> RankerSpec:
        """This member without its language and modifiers: the model it reads."""
        return replace(self, language=None, modifiers=())

    @property
    def inner(self) -> RankerSpec:
        """What the outermost modifier, else the language restriction, applies to."""
        if self.modifiers:
            return replace(self, modifiers=self.modifiers[:-1])
        return replace(self, language=None)

    def __str__(self) -> str:
        if self.is_fusion:
            weights = self.weights or (None,) * len(self.members)
            return "+".join(str(m) if w is None else f"{w:g}*{m}"
                            for m, w in zip(self.members, weights, strict=True))
        out = self.stored_model
        if self.backend:
            out += f":{self.backend}"
        if self.language:
            out += f"@{self.language}"
        return out + "".join(f"~{m}" for m in self.modifiers)


def parse(text: str, *, typed: bool = False) -> RankerSpec:
    """The spec of a ranker name; ``typed``: a name a user typed, whose old spelling
    (``NAME@onnx``) is named on stderr, once per name (names read from stored files:
    ``typed=False``, silent). A name against the grammar: :class:`RankerSpecError`.

    >>> str(parse("bm25@same+e5-small-multilingual:onnx+bm25-en@cross"))
    'bm25@same+e5-small-multilingual:onnx+bm25-en@cross'
    >>> [str(m) for m in parse("e5-small-multilingual+llm64+bm25~prf").members]
    ['e5-small-multilingual+llm64', 'bm25~prf']
    >>> parse("0.7*bm25+0.3*minilm-en").weights
    (0.7, 0.3)
    >>> parse("minilm-en@onnx@en") == parse("minilm-en:onnx@en")
    True
    >>> parse("two-stage:minilm-en").model, parse("bm25~prf~links").modifiers
    ('two-stage:minilm-en', ('prf', 'links'))
    >>> parse("bm25+")
    Traceback (most recent call last):
    ...
    openmsd.rank.spec.RankerSpecError: 'bm25+': member 2 is empty
    >>> parse("bm25~prf@same")
    Traceback (most recent call last):
    ...
    openmsd.rank.spec.RankerSpecError: 'bm25~prf@same': the modifiers come last (bm25@same~prf)
    """
    if not text or not text.strip():
        raise RankerSpecError("empty ranker name")
    parts = _members(text)
    old = False
    specs, weights = [], []
    for i, part in enumerate(parts, 1):
        weight, part = _weight(text, part)
        if not part:
            raise RankerSpecError(f"{text!r}: member {i} is empty")
        spec, was_old = _member(text, part)
        specs.append(spec)
        weights.append(weight)
        old = old or was_old
    given = [w is not None for w in weights]
    if any(given) and not all(given):
        raise RankerSpecError(f"{text!r}: give every member a weight (0.5*A+0.5*B) or none")
    if len(specs) == 1:
        if given[0]:
            raise RankerSpecError(f"{text!r}: a weight needs a fusion of several members")
        spec = specs[0]
    else:
        spec = RankerSpec(members=tuple(specs),
                          weights=tuple(weights) if all(given) else None)  # type: ignore[arg-type]
    if old and typed and text not in _warned:
        _warned.add(text)
        print(f"openmsd: {text!r} is an old spelling, deprecated: write {str(spec)!r} "
              "(NAME:BACKEND)", file=sys.stderr)
    return spec


def _members(text: str) -> list[str]:
    """``text`` split at ``+``; an enrichment (``+llm64``) stays with the model before it."""
    members: list[str] = []
    for part in text.split("+"):
        if members and members[-1] and _ENRICHED_TAIL.fullmatch(part) \
                and not _ENRICHMENT.fullmatch(members[-1]):
            members[-1] = f"{members[-1]}+{part}"
        else:
            members.append(part)
    return members


def _weight(text: str, part: str) -> tuple[float | None, str]:
    """``(weight, name)`` of a member ``W*NAME``; ``(None, part)`` without a weight."""
    match = _WEIGHT.fullmatch(part)
    if match is None:
        if "*" in part:
            raise RankerSpecError(f"{_where(text, part)}: bad weight: expected W*NAME, "
                                  "W a number")
        return None, part
    return float(match["weight"]), match["rest"]


def _member(text: str, part: str) -> tuple[RankerSpec, bool]:
    """One member's spec, and whether it used the old spelling of its backend."""
    rest, modifiers = part, []
    while True:
        head, tilde, tail = rest.rpartition("~")
        if tilde and head and tail in MODIFIERS:
            modifiers.insert(0, tail)
            rest = head
        else:
            break
    language = backend = None
    old = False
    head, at, tail = rest.rpartition("@")
    if at and head and tail not in BACKENDS and _LANGUAGE.fullmatch(tail):
        language, rest = tail, head
    elif at and not head:
        raise RankerSpecError(f"{_where(text, part)}: no model before '@'")
    elif at and not tail:
        raise RankerSpecError(f"{_where(text, part)}: ends with '@': expected a language "
                              "(same, cross, en, ...)")
    while (found := _backend_tail(rest)) is not None:
        if backend is not None:
            raise RankerSpecError(f"{_where(text, part)}: two backends")
        rest, backend, mark = found
        old = old or mark == "@"
    head, tilde, tail = rest.rpartition("~")
    if tilde and head and tail in MODIFIERS:
        raise RankerSpecError(f"{_where(text, part)}: the modifiers come last "
                              f"({_canonical(head, backend, language, [tail, *modifiers])})")
    head, at, tail = rest.rpartition("@")
    if backend is not None and at and head and _LANGUAGE.fullmatch(tail):
        raise RankerSpecError(f"{_where(text, part)}: the backend comes before the language "
                              f"({_canonical(head, backend, tail, modifiers)})")
    model, plus, enrichment = rest.rpartition("+")
    if not (plus and model and _ENRICHMENT.fullmatch(enrichment)):
        model, enrichment = rest, ""
    if not model:
        raise RankerSpecError(f"{_where(text, part)}: no model")
    return RankerSpec(model=model, enrichment=enrichment or None, backend=backend,
                      language=language, modifiers=tuple(modifiers)), old


def _backend_tail(text: str) -> tuple[str, str, str] | None:
    """``(head, backend, mark)`` of ``HEAD:BACKEND`` (or the old ``HEAD@BACKEND``), else None:
    a tail is a backend only when it is a known one."""
    for mark in (":", "@"):
        head, sep, tail = text.rpartition(mark)
        if sep and head and tail in BACKENDS:
            return head, tail, mark
    return None


def _where(text: str, part: str) -> str:
    """The bad part of a name: the name, or its member ``part`` in it."""
    return repr(text) if part == text else f"{part!r} in {text!r}"


def _canonical(model: str, backend: str | None, language: str | None,
               modifiers: list[str]) -> str:
    return str(RankerSpec(model=model, backend=backend, language=language,
                          modifiers=tuple(modifiers)))
