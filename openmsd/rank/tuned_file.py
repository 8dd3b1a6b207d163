"""The rankers file (``CORPUS/index/ranker.json``, written by ``openmsd train ranker``), read
and checked whole, and written by one writer (:func:`write_tuned`): a file edited to nonsense,
or holding NaN or infinite weights, is an :class:`~openmsd.artifact.ArtifactError` naming it and
``openmsd train ranker``, never a traceback deep in a fusion and never weights that rank
nothing."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openmsd.artifact import ArtifactError, finite_numbers, read_json_artifact
from openmsd.rank.fusion import FEATURES, METHODS
from openmsd.rank.learned import LEARNED
from openmsd.rank.spec import RankerSpecError, parse

__all__ = ["read_tuned", "write_tuned"]


def read_tuned(path: Path, corpus_root: Path) -> dict[str, Any]:
    """The tuned fusions of ``path`` (``{name: {"members", "weights", "method", ...}}``),
    every entry checked: members rankers' names, weights finite and as many as the method
    takes, the method known, fallbacks over the members."""
    rebuild = f"openmsd train ranker {corpus_root}"
    specs = read_json_artifact(path, rebuild)
    if not isinstance(specs, dict):
        raise ArtifactError.damaged(path, "expected a JSON object of tuned fusions", rebuild)
    for name, spec in specs.items():
        _check(path, name, spec, rebuild)
    return specs


def _check(path: Path, name: str, spec: Any, rebuild: str) -> None:
    def damaged(why: str) -> ArtifactError:
        return ArtifactError.damaged(path, f"{name}: {why}", rebuild)

    if not isinstance(spec, dict):
        raise damaged("expected an object")
    members = spec.get("members")
    if not isinstance(members, list) or not members or not all(
            isinstance(m, str) for m in members):
        raise damaged("field 'members': expected a list of ranker names")
    for member in members:
        try:
            parse(member)
        except RankerSpecError as error:
            raise damaged(f"member {member!r}: {error}") from None
    method = spec.get("method", "rrf")
    if method == LEARNED:  # its heads are checked where they are read (learned_fusion)
        return
    if method not in METHODS:
        raise damaged(f"field 'method': expected one of {', '.join(METHODS)}")
    per_member = len(FEATURES) if method == "learned" else 1
    if "weights" in spec:
        weights = finite_numbers(spec["weights"], path, f"{name}.weights", rebuild)
        if len(weights) != per_member * len(members):
            raise damaged(f"{len(weights)} weights for {len(members)} members")
    fallbacks = spec.get("fallbacks", [])
    if not isinstance(fallbacks, list):
        raise damaged("field 'fallbacks': expected a list")
    for n, entry in enumerate(fallbacks):
        if not isinstance(entry, dict) or not all(
                isinstance(entry.get(k), list) and all(m in members for m in entry[k])
                for k in ("silent", "members")):
            raise damaged(f"fallback {n}: expected 'silent' and 'members' lists of its members")
        weights = finite_numbers(entry.get("weights"), path, f"{name}.fallbacks.{n}.weights",
                                 rebuild)
        fallback_method = entry.get("method", "weighted")
        if fallback_method not in METHODS:
            raise damaged(f"fallback {n}: method: expected one of {', '.join(METHODS)}")
        expected = (len(FEATURES) if fallback_method == "learned" else 1) * len(entry["members"])
        if len(weights) != expected:
            raise damaged(f"fallback {n}: {len(weights)} weights for "
                          f"{len(entry['members'])} members")


def write_tuned(path: Path, specs: dict[str, Any], build: str | None) -> None:
    """Write the rankers ``specs`` to ``path`` atomically, each with the corpus ``build`` it
    was fitted on and when (kept where an entry has them already)."""
    for entry in specs.values():
        entry.setdefault("corpus_build", build)
        entry.setdefault("fitted", datetime.now(UTC).isoformat(timespec="seconds"))
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(specs, indent=1) + "\n")
    os.replace(partial, path)
