"""Files a command reads that a user or a tool can damage (the tuned ``ranker.json``, an
adapter, a learned ranker): a damaged one is refused with one line naming the file, what is
wrong and the command that rebuilds it, never used half-read and never passed over in silence.

>>> str(ArtifactError.damaged("c/index/ranker.json", "not JSON", "openmsd tune c"))
"c/index/ranker.json: not JSON; rebuild it with 'openmsd tune c'"
>>> try:
...     finite_numbers([1.0, float("nan")], "c/ranker.json", "hybrid.weights", "openmsd tune c")
... except ArtifactError as error:
...     print(error)
c/ranker.json: field 'hybrid.weights': not finite numbers (nan); rebuild it with 'openmsd tune c'
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["ArtifactError", "finite_numbers", "read_json_artifact"]


class ArtifactError(ValueError):
    """A stored artifact that cannot be used: its message is one line naming the file and, where
    one does, the command that rebuilds it. The server answers it with 503."""

    @classmethod
    def damaged(cls, path: str | Path, why: str, rebuild: str) -> ArtifactError:
        """``PATH: WHY; rebuild it with 'REBUILD'``."""
        return cls(f"{path}: {why}; rebuild it with '{rebuild}'")


def read_json_artifact(path: str | Path, rebuild: str) -> Any:
    """The JSON value of the file ``path``; :class:`ArtifactError` when it cannot be read or
    is not JSON."""
    try:
        return json.loads(Path(path).read_bytes())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        why = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise ArtifactError.damaged(path, f"cannot be read as JSON ({why})", rebuild) from None


def finite_numbers(values: Any, path: str | Path, field: str, rebuild: str) -> list[float]:
    """``values`` as floats when it is a list of finite numbers; :class:`ArtifactError`
    naming the field otherwise (NaN, infinity, strings, booleans)."""
    if not isinstance(values, Sequence) or isinstance(values, str) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        raise ArtifactError.damaged(path, f"field {field!r}: expected a list of numbers",
                                    rebuild)
    bad = [v for v in values if not math.isfinite(v)]
    if bad:
        raise ArtifactError.damaged(path, f"field {field!r}: not finite numbers "
                                    f"({', '.join(map(str, bad[:3]))})", rebuild)
    return [float(v) for v in values]
