"""The lazy public face of a package (PEP 562), for the few faces whose full import is costly.

A lazy face writes its imports under ``if TYPE_CHECKING:`` (so type checkers and the import
graph see them), its ``__all__`` once, and ends with
``__getattr__, __dir__ = lazy_face(__name__)``: the map name → submodule is read from those
imports, and a submodule is imported on the first use of one of its names.

>>> import openmsd.models
>>> getattr_, dir_ = lazy_face("openmsd.models")
>>> getattr_("DEFAULT_MODEL")
'e5-small-multilingual'
>>> "DEFAULT_MODEL" in dir_()
True
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["face_map", "lazy_face"]


def face_map(source: str, package: str) -> dict[str, str]:
    """Name → defining module of each ``from package.sub import name`` at the top level of a
    face's ``source`` or under its ``if TYPE_CHECKING:``.

    >>> face_map("if TYPE_CHECKING:\\n    from p.a import f, g\\nfrom p.b.c import h\\n", "p")
    {'f': 'p.a', 'g': 'p.a', 'h': 'p.b.c'}
    """
    where: dict[str, str] = {}
    for node in ast.parse(source).body:
        nodes = node.body if isinstance(node, ast.If) else [node]
        for sub in nodes:
            if (isinstance(sub, ast.ImportFrom) and sub.level == 0 and sub.module
                    and sub.module.startswith(f"{package}.")):
                where |= {alias.asname or alias.name: sub.module for alias in sub.names}
    return where


def lazy_face(package: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of the face ``package``: a name its
    ``TYPE_CHECKING`` imports list is imported from its submodule on first use;
    ``AttributeError`` for any other name."""
    module = sys.modules[package]
    spec = module.__spec__
    source = spec.loader.get_source(package) if spec and spec.loader else None  # type: ignore[attr-defined]
    if source is None:
        raise ImportError(f"the face {package} needs its source to read its imports")
    where = face_map(source, package)

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(where[name]), name)

    def __dir__() -> list[str]:
        return sorted(set(vars(module)) | set(getattr(module, "__all__", ())))

    return __getattr__, __dir__
