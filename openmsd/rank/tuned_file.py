"""The rankers file (``CORPUS/index/ranker.json``, written by ``openmsd train ranker``): one
:class:`RankerEntry` a ranker name, read and checked whole (:func:`read_tuned`) and written by
one writer (:func:`write_tuned`). A file edited to nonsense, or holding NaN or infinite
weights, is an :class:`~openmsd.artifact.ArtifactError` naming it and ``openmsd train ranker``,
never a traceback deep in a fusion and never weights that rank nothing."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openmsd.artifact import ArtifactError, finite_numbers, read_json_artifact
from openmsd.rank.fusion import FEATURES, METHODS
from openmsd.rank.learned import LEARNED
from openmsd.rank.spec import RankerSpecError, parse

__all__ = ["FallbackEntry", "RankerEntry", "read_tuned", "write_tuned"]

#: The fields a :class:`RankerEntry` reads; the others are kept as its ``record``.
_READ = ("members", "method", "weights", "fallbacks", "tuned", "calibration", "paper",
         "free_text")


@dataclass(frozen=True)
class FallbackEntry:
    """How a fusion ranks where the members of ``silent`` say nothing: ``members`` (names)
    fused by ``method`` with ``weights``."""

    silent: tuple[str, ...]
    members: tuple[str, ...]
    weights: tuple[float, ...]
    method: str = "weighted"

    def as_json(self) -> dict[str, Any]:
        return {"silent": list(self.silent), "members": list(self.members),
                "weights": list(self.weights), "method": self.method}


@dataclass(frozen=True)
class RankerEntry:
    """One ranker of the rankers file: its ``members`` (ranker names, in order) fused by
    ``method`` (a :data:`~openmsd.rank.fusion.METHODS` fusion with ``weights``, or the
    learned ranker, :data:`~openmsd.rank.learned.LEARNED`, whose ``paper`` and ``free_text``
    heads :func:`~openmsd.rank.learned.learned_fusion` reads); ``fallbacks``; ``tuned``: False
    where the untuned fusion was kept; ``calibration``: score → probability of a link;
    ``record``: what else the file keeps (how it was selected and trained, the corpus build
    and when), shown but not ranked with.

    >>> entry = RankerEntry.from_json({"members": ["bm25", "e5-small-multilingual"],
    ...                                "weights": [1, 2], "method": "zscore", "fitted": "now"})
    >>> entry.weights, entry.record
    ((1.0, 2.0), {'fitted': 'now'})
    >>> RankerEntry.from_json({"members": ["bm25"], "weights": [1, 2], "method": "zscore"})
    Traceback (most recent call last):
    ...
    ValueError: 2 weights for 1 members
    """

    members: tuple[str, ...]
    method: str = "rrf"
    weights: tuple[float, ...] | None = None
    fallbacks: tuple[FallbackEntry, ...] = ()
    tuned: bool = True
    calibration: Mapping[str, Any] | None = None
    paper: Mapping[str, Any] | None = None
    free_text: Mapping[str, Any] | None = None
    record: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, obj: Any) -> RankerEntry:
        """The entry ``obj`` (a JSON object) stands for; ``ValueError`` naming the field that
        is not what it should be."""
        if not isinstance(obj, dict):
            raise ValueError("expected an object")
        members = obj.get("members")
        if not isinstance(members, list) or not members or not all(
                isinstance(m, str) for m in members):
            raise ValueError("field 'members': expected a list of ranker names")
        for member in members:
            try:
                parse(member)
            except RankerSpecError as error:
                raise ValueError(f"member {member!r}: {error}") from None
        method = obj.get("method", "rrf")
        if method != LEARNED and method not in METHODS:
            raise ValueError(f"field 'method': expected one of {', '.join(METHODS)}")
        weights = None
        if "weights" in obj and method != LEARNED:
            weights = tuple(_numbers(obj["weights"], "weights"))
            if len(weights) != _per_member(method) * len(members):
                raise ValueError(f"{len(weights)} weights for {len(members)} members")
        fallbacks = obj.get("fallbacks", [])
        if not isinstance(fallbacks, list):
            raise ValueError("field 'fallbacks': expected a list")
        heads = {key: obj.get(key) for key in ("calibration", "paper", "free_text")}
        for key, value in heads.items():
            if value is not None and not isinstance(value, dict):
                raise ValueError(f"field {key!r}: expected an object")
        return cls(tuple(members), method, weights,
                   tuple(_fallback(n, entry, members) for n, entry in enumerate(fallbacks)),
                   bool(obj.get("tuned", True)), heads["calibration"], heads["paper"],
                   heads["free_text"], {k: v for k, v in obj.items() if k not in _READ})

    def as_json(self) -> dict[str, Any]:
        """The entry as the rankers file writes it (:meth:`from_json` reads it back)."""
        out: dict[str, Any] = {"members": list(self.members), "method": self.method}
        if self.weights is not None:
            out["weights"] = list(self.weights)
        if self.fallbacks:
            out["fallbacks"] = [f.as_json() for f in self.fallbacks]
        if not self.tuned:
            out["tuned"] = False
        for key in ("calibration", "paper", "free_text"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return {**out, **self.record}


def _per_member(method: str) -> int:
    return len(FEATURES) if method == "learned" else 1


def _numbers(values: Any, what: str) -> list[float]:
    try:
        return finite_numbers(values, "", what, "")
    except ArtifactError:
        raise ValueError(f"field {what!r}: expected a list of finite numbers") from None


def _fallback(n: int, entry: Any, members: list[str]) -> FallbackEntry:
    if not isinstance(entry, dict) or not all(
            isinstance(entry.get(k), list) and all(m in members for m in entry[k])
            for k in ("silent", "members")):
        raise ValueError(f"fallback {n}: expected 'silent' and 'members' lists of its members")
    weights = _numbers(entry.get("weights"), f"fallbacks.{n}.weights")
    method = entry.get("method", "weighted")
    if method not in METHODS:
        raise ValueError(f"fallback {n}: method: expected one of {', '.join(METHODS)}")
    if len(weights) != _per_member(method) * len(entry["members"]):
        raise ValueError(f"fallback {n}: {len(weights)} weights for "
                         f"{len(entry['members'])} members")
    return FallbackEntry(tuple(entry["silent"]), tuple(entry["members"]), tuple(weights),
                         method)


def read_tuned(path: Path, corpus_root: Path) -> dict[str, RankerEntry]:
    """The rankers of ``path``, name → :class:`RankerEntry`, every entry checked;
    :class:`~openmsd.artifact.ArtifactError` naming the file, the entry and the field."""
    rebuild = f"openmsd train ranker {corpus_root}"
    specs = read_json_artifact(path, rebuild)
    if not isinstance(specs, dict):
        raise ArtifactError.damaged(path, "expected a JSON object of tuned fusions", rebuild)
    out = {}
    for name, spec in specs.items():
        try:
            out[name] = RankerEntry.from_json(spec)
        except ValueError as error:
            raise ArtifactError.damaged(path, f"{name}: {error}", rebuild) from None
    return out


def write_tuned(path: Path, specs: Mapping[str, RankerEntry | dict[str, Any]],
                build: str | None) -> None:
    """Write the rankers ``specs`` (entries, or JSON objects checked as
    :meth:`RankerEntry.from_json` reads them) to ``path`` atomically, each with the corpus
    ``build`` it was fitted on and when (kept where an entry has them already)."""
    out = {}
    for name, entry in specs.items():  # a JSON object is completed in place
        entry = entry.as_json() if isinstance(entry, RankerEntry) else entry
        try:
            RankerEntry.from_json(entry)
        except ValueError as error:
            raise ValueError(f"{path}: {name}: {error}") from None
        entry.setdefault("corpus_build", build)
        entry.setdefault("fitted", datetime.now(UTC).isoformat(timespec="seconds"))
        out[name] = entry
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(out, indent=1) + "\n")
    os.replace(partial, path)
