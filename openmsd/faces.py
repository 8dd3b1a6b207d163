"""The lazy exports of a package's public face (PEP 562).

A package's ``__init__`` maps each exported name to the submodule defining it (``_WHERE``)
and sets ``__getattr__ = lazy_getattr(__name__, _WHERE)``: the submodule is imported on the
first use of one of its names, so importing a package loads none of its modules.

>>> getattr_ = lazy_getattr("openmsd.export", {"split_name": "names"})
>>> getattr_("split_name").__module__
'openmsd.export.names'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(package: str, where: dict[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: name → ``package.<where[name]>.<name>``;
    ``AttributeError`` for a name ``where`` does not list."""

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{where[name]}"), name)

    return __getattr__
