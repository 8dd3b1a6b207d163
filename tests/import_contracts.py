"""An import-linter contract type that sees through public faces name by name.

A face (``openmsd/P/__init__.py``) imports every name it exports (under ``TYPE_CHECKING`` where
the face is lazy), so in the import graph anything that imports ``openmsd.P`` reaches all of
``P``'s submodules. That is right for contracts between packages, and too coarse for a contract
about one submodule ("ingest never imports ``corpus.build``": ingest needs ``Record`` from the
same face). ``forbidden_by_name`` is import-linter's ``forbidden`` contract on the graph the code
means: an import of names from a face becomes an import of the submodules the face imports those
names from, and the faces' own edges to their submodules are left out. It is registered in
``pyproject.toml`` (``contract_types``) and run by ``lint-imports``.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

from grimp import ImportGraph
from importlinter import ContractCheck
from importlinter.contracts.forbidden import ForbiddenContract

from openmsd.faces import face_map

__all__ = ["ForbiddenByNameContract", "name_graph"]


def _source(module: str) -> Path | None:
    """The file of a module, found from its top-level package without importing it."""
    top, *rest = module.split(".")
    spec = importlib.util.find_spec(top)
    if spec is None or spec.origin is None:
        return None
    base = Path(spec.origin).parent.joinpath(*rest)
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if rest and path.exists():
            return path
    return Path(spec.origin) if not rest else None


def _face_map(path: Path, face: str) -> dict[str, str]:
    """Name → submodule (relative to ``face``) of each name the face imports from its own
    submodules."""
    return {name: module.removeprefix(f"{face}.")
            for name, module in face_map(path.read_text(), face).items()}


def name_graph(graph: ImportGraph) -> ImportGraph:
    """``graph`` with imports from faces replaced by imports of the submodules that define the
    names imported (changed in place and returned)."""
    faces: dict[str, dict[str, str]] = {}
    for module in graph.modules:
        path = _source(module) if "." in module else None
        if path is not None and path.name == "__init__.py":
            where = _face_map(path, module)
            if where:
                faces[module] = where
    for face, where in faces.items():  # the faces' own edges to their submodules
        for sub in set(where.values()):
            target = f"{face}.{sub}"
            if graph.direct_import_exists(importer=face, imported=target):
                graph.remove_import(importer=face, imported=target)
    for importer in sorted(graph.modules):
        imported = graph.find_modules_directly_imported_by(importer) & set(faces)
        if not imported:
            continue
        path = _source(importer)
        if path is None:
            continue
        uses: dict[str, list[tuple[int, str, str]]] = {face: [] for face in imported}
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in uses:
                uses[node.module] += [(node.lineno, a.name, a.asname or a.name)
                                      for a in node.names]
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in uses and alias.asname:
                        uses[alias.name] += [
                            (n.lineno, n.attr, alias.asname) for n in ast.walk(tree)
                            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                            and n.value.id == alias.asname]
        for face, names in uses.items():
            where = faces[face]
            if not names or any(name not in where for _, name, _ in names):
                continue  # a name the face defines itself, or the module as a whole: keep it
            graph.remove_import(importer=importer, imported=face)
            for line, name, _ in names:
                graph.add_import(importer=importer, imported=f"{face}.{where[name]}",
                                 line_number=line, line_contents=f"from {face} import {name}")
    return graph


class ForbiddenByNameContract(ForbiddenContract):
    """import-linter's ``forbidden`` contract on :func:`name_graph` of the import graph."""

    type_name = "forbidden_by_name"

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        return super().check(name_graph(graph), verbose)
