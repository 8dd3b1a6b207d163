"""The web application and HTTP API over a corpus (``openmsd serve CORPUS``).

Everything other packages use is imported from here; the names load lazily (PEP 562), so
importing the package costs nothing and creates no import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openmsd.faces import lazy_getattr

if TYPE_CHECKING:
    from openmsd.server.app import create_app, serve
    from openmsd.server.resources import BATCH_ENV, THREADS_ENV, Resources, indexed_models

_WHERE: dict[str, str] = {
    "BATCH_ENV": "resources",
    "Resources": "resources",
    "THREADS_ENV": "resources",
    "create_app": "app",
    "indexed_models": "resources",
    "serve": "app",
}

__all__ = [
    "BATCH_ENV", "THREADS_ENV", "Resources", "create_app", "indexed_models", "serve",
]


__getattr__ = lazy_getattr(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
