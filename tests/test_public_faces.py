"""Every package has a public face, and other packages import only from it.

A face is the package's ``__init__.py``: the imports of what it exports and ``__all__``. A lazy
face (where importing the whole package costs what its users should not pay) writes the same
imports under ``TYPE_CHECKING``, read by :func:`openmsd.faces.lazy_face`. import-linter's
``protected`` contracts (pyproject.toml) check that no module imports another package's
submodules; this test checks that too (on the source, in the default suite), and what the import
graph cannot show: private names, faces that say what they export, and faces that import alone.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import grimp
import pytest

from openmsd.faces import face_map
from tests.import_contracts import name_graph

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "openmsd"


def packages(root: Path) -> list[str]:
    """The top-level packages under ``root/openmsd``."""
    return sorted(p.name for p in (root / PACKAGE).iterdir() if (p / "__init__.py").exists())


@cache
def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def dotted(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(root: Path, path: Path) -> list[tuple[int, str, str | None]]:
    """(line, absolute module, imported name or None) of every import in a file, function-level
    and ``TYPE_CHECKING`` ones included."""
    me = dotted(root, path)
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(parse(path)):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = me.split(".")[: len(me.split(".")) - node.level
                                      + (path.name == "__init__.py")]
                module = ".".join([*base, *([module] if module else [])])
            found += [(node.lineno, module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names]
    return found


def face_names(root: Path, package: str) -> set[str]:
    """What ``openmsd.<package>`` offers: what it binds or imports (lazily or not)."""
    return bindings(parse(root / PACKAGE / package / "__init__.py"))


def violations(root: Path) -> list[str]:
    """``file:line: what`` for each import of another package's submodule or private name, or
    of a name its face does not have."""
    tops = set(packages(root))
    modules = {dotted(root, p) for p in (root / PACKAGE).rglob("*.py")}
    faces = {package: face_names(root, package) for package in tops}
    out: list[str] = []
    for path in sorted((root / PACKAGE).rglob("*.py")):
        rel = path.relative_to(root)
        own = rel.parts[1] if len(rel.parts) > 2 else None
        for line, module, name in imports(root, path):
            parts = module.split(".")
            if parts[0] != PACKAGE or len(parts) < 2 or parts[1] not in tops or parts[1] == own:
                continue
            target = f"{module}.{name}" if name else module
            if len(parts) > 2 or (name and target in modules):
                out.append(f"{rel}:{line}: imports {target} (import it from {PACKAGE}.{parts[1]})")
            elif name and name.startswith("_"):
                out.append(f"{rel}:{line}: imports the private {target}")
            elif name and name not in faces[parts[1]]:
                out.append(f"{rel}:{line}: imports {target}, which {module} does not have")
    return out


def bindings(tree: ast.Module) -> set[str]:
    """Names bound at a module's top level (inside top-level if / try too)."""
    names: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
            elif isinstance(node, ast.Import | ast.ImportFrom):
                names.update(a.asname or a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.If | ast.Try):
                visit(node.body)
                visit(node.orelse)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(tree.body)
    return names


def is_lazy(tree: ast.Module) -> bool:
    """Whether a face sets its ``__getattr__`` with ``lazy_face``."""
    return "lazy_face" in bindings(tree)


def face_problems(root: Path, package: str) -> list[str]:
    """What is wrong with one face: ``__all__`` is not the set of its exports, a name is not
    defined where it is imported from or shadows a submodule, or a lazy face imports a name
    at once."""
    base = root / PACKAGE / package
    source = (base / "__init__.py").read_text()
    tree = ast.parse(source)
    where = face_map(source, f"{PACKAGE}.{package}")
    declared: list[str] = []
    for node in tree.body:
        target = (node.targets[0] if isinstance(node, ast.Assign) else
                  node.target if isinstance(node, ast.AnnAssign) else None)
        if isinstance(target, ast.Name) and target.id == "__all__":
            declared = list(ast.literal_eval(node.value))
    if any(isinstance(node, ast.FunctionDef | ast.ClassDef) for node in tree.body):
        # an application package (openmsd.cli): its __init__ is code, not a face
        return [] if declared else [f"{package}: no __all__"]
    problems = []
    if is_lazy(tree):
        eager = sorted(alias.asname or alias.name for node in tree.body
                       if isinstance(node, ast.ImportFrom) and node.module in set(where.values())
                       for alias in node.names)
        if eager:
            problems.append(f"{package}: a lazy face imports {eager} at once")
    own = bindings(tree) - {"__all__", "TYPE_CHECKING", "__getattr__", "__dir__",
                            "lazy_face"} - set(where)
    public = sorted(set(where) | {n for n in own if not n.startswith("_")})
    if sorted(declared) != public:
        problems.append(f"{package}: __all__ is not the sorted set of exports: "
                        f"{sorted(set(declared) ^ set(public))}")
    for name, module in sorted(where.items()):
        sub = module.removeprefix(f"{PACKAGE}.{package}.").replace(".", "/")
        path = base / f"{sub}.py"
        path = path if path.exists() else base / sub / "__init__.py"
        if not path.exists() or name not in bindings(parse(path)):
            problems.append(f"{package}: {name} is not defined in {module}")
        if (base / f"{name}.py").exists() or (base / name / "__init__.py").exists():
            problems.append(f"{package}: {name} is also a submodule (the import system would "
                            "replace the name by the module)")
    return problems


def test_no_package_imports_another_package_inside() -> None:
    assert violations(ROOT) == []


def test_every_face_says_what_it_loads() -> None:
    assert [p for package in packages(ROOT) for p in face_problems(ROOT, package)] == []


def test_a_planted_violation_is_found(tmp_path: Path) -> None:
    for name, text in {
        "openmsd/__init__.py": "",
        "openmsd/a/__init__.py": "from openmsd.a.x import f\n",
        "openmsd/a/x.py": "def f(): ...\n_g = 1\n",
        "openmsd/a/y.py": "from openmsd.a.x import _g, f\n",  # inside a: allowed
        "openmsd/b/__init__.py": "",
        "openmsd/b/z.py": ("from openmsd.a.x import f\nfrom openmsd.a import _g\n"
                           "def h():\n    import openmsd.a.x as m\n    from openmsd.a import x\n"),
        "openmsd/top.py": "from openmsd.a import f, g\n",
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert violations(tmp_path) == [
        "openmsd/b/z.py:1: imports openmsd.a.x.f (import it from openmsd.a)",
        "openmsd/b/z.py:2: imports the private openmsd.a._g",
        "openmsd/b/z.py:4: imports openmsd.a.x (import it from openmsd.a)",
        "openmsd/b/z.py:5: imports openmsd.a.x (import it from openmsd.a)",
        "openmsd/top.py:1: imports openmsd.a.g, which openmsd.a does not have",
    ]


def test_a_face_that_disagrees_with_its_exports_is_found(tmp_path: Path) -> None:
    (tmp_path / "openmsd" / "a").mkdir(parents=True)
    (tmp_path / "openmsd" / "a" / "x.py").write_text("def f(): ...\n")
    (tmp_path / "openmsd" / "a" / "__init__.py").write_text(
        "from openmsd.a.x import f, g, x\n__all__ = ['f', 'g']\n")
    assert face_problems(tmp_path, "a") == [
        "a: __all__ is not the sorted set of exports: ['x']",
        "a: g is not defined in openmsd.a.x",
        "a: x is not defined in openmsd.a.x",
        "a: x is also a submodule (the import system would replace the name by the module)",
    ]


def test_a_lazy_face_that_imports_at_once_is_found(tmp_path: Path) -> None:
    (tmp_path / "openmsd" / "a").mkdir(parents=True)
    (tmp_path / "openmsd" / "a" / "x.py").write_text("def f(): ...\ndef g(): ...\n")
    (tmp_path / "openmsd" / "a" / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\nfrom openmsd.faces import lazy_face\n"
        "from openmsd.a.x import g\nif TYPE_CHECKING:\n    from openmsd.a.x import f\n"
        "__all__ = ['f', 'g']\n__getattr__, __dir__ = lazy_face(__name__)\n")
    assert face_problems(tmp_path, "a") == ["a: a lazy face imports ['g'] at once"]


def lazy_packages() -> list[str]:
    return [p for p in packages(ROOT) if is_lazy(parse(ROOT / PACKAGE / p / "__init__.py"))]


def test_every_package_imports_first() -> None:
    """Each package imported first, in a process of its own: an eager face imports its whole
    package, so an import cycle between packages fails here."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for package in packages(ROOT):
        done = subprocess.run([sys.executable, "-c", f"import {PACKAGE}.{package}"],
                              capture_output=True, text=True, env=env, cwd=ROOT, check=False)
        assert done.returncode == 0, f"{package}: {done.stderr[-600:]}"


def test_lazy_faces_load_no_submodule_until_used() -> None:
    """A lazy face loads none of its submodules (nor torch) on import, and one name loads the
    submodule it comes from; a name it does not export is an ``AttributeError``."""
    lazy = lazy_packages()
    assert {"models", "eval"} <= set(lazy)
    code = ("import importlib, sys\n"
            f"lazy = {lazy!r}\n"
            "for p in lazy:\n"
            "    importlib.import_module('openmsd.' + p)\n"
            "print(sorted(m for m in sys.modules if m == 'torch' or m.count('.') > 1\n"
            "             and m.split('.')[1] in lazy))\n"
            "import openmsd.models\n"
            "assert openmsd.models.DEFAULT_MODEL and 'openmsd.models.registry' in sys.modules\n"
            "assert 'DEFAULT_MODEL' in dir(openmsd.models)\n"
            "try:\n    openmsd.models.no_such_name\nexcept AttributeError as error:\n"
            "    print(error)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True, cwd=ROOT).stdout
    assert out.splitlines() == ["[]", "module 'openmsd.models' has no attribute 'no_such_name'"]


def test_forbidden_by_name_sees_through_a_face(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Through a face every submodule is reachable; by name only the one imported is, and an
    import of the other name, even inside a function, reaches it again."""
    for name, text in {
        "facedemo/__init__.py": "",
        "facedemo/a/__init__.py": ("from facedemo.a.heavy import g\n"
                                   "from facedemo.a.light import f\n"),
        "facedemo/a/light.py": "def f(): ...\n",
        "facedemo/a/heavy.py": "def g(): ...\n",
        "facedemo/b/__init__.py": "",
        "facedemo/b/uses_f.py": "from facedemo.a import f\n",
        "facedemo/b/uses_g.py": "def h():\n    from facedemo.a import g\n",
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("facedemo", cache_dir=None)
    assert graph.find_shortest_chain(importer="facedemo.b.uses_f", imported="facedemo.a.heavy")
    named = name_graph(graph)
    assert named.find_shortest_chain(importer="facedemo.b.uses_f",
                                     imported="facedemo.a.heavy") is None
    assert named.direct_import_exists(importer="facedemo.b.uses_f", imported="facedemo.a.light")
    assert named.direct_import_exists(importer="facedemo.b.uses_g", imported="facedemo.a.heavy")
    for module in [m for m in sys.modules if m.split(".")[0] == "facedemo"]:
        monkeypatch.delitem(sys.modules, module)
