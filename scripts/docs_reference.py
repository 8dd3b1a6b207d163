"""Write the generated reference pages of the docs site from the code itself.

* ``docs/reference/cli.md``: every ``openmsd`` command with its usage, arguments and options
  (names, types, defaults, help), walked from the Typer app (``openmsd.cli.app``);
* ``docs/reference/api.md`` and ``docs/reference/openapi.json``: every HTTP route of
  ``openmsd serve`` from the app's OpenAPI schema (methods, parameters, request bodies,
  responses);
* ``docs/benchmarks.md``: the headline figures from ``benchmarks/results/*.json``, each with
  the conditions it was measured under (``scripts/benchmarks_page.py``);
* the ``<!-- record:NAME -->`` blocks of the guides (MP-BERT4CR's Table 3 in
  ``docs/citrec.md``): the record's table, rendered from ``benchmarks/results/NAME.json``.

Run it after changing a command, a route or a record; ``tests/test_docs_reference.py`` fails
while a page differs from what this script writes::

    python scripts/docs_reference.py          # write the pages
    python scripts/docs_reference.py --check  # exit 1 naming each page that is stale
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference"


def _cell(text: Any) -> str:
    """Text fit for one Markdown table cell (no line breaks, pipes escaped)."""
    return " ".join(str(text).split()).replace("|", "\\|") if text not in (None, "") else ""


def _commands(command: Any, path: list[str], context: Any) -> Iterator[tuple[list[str], Any, Any]]:
    """Every leaf command under ``command`` as (its words, the command, its context)."""
    from typer._click.core import Context

    if hasattr(command, "list_commands"):
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            if sub is None or getattr(sub, "hidden", False):
                continue
            yield from _commands(sub, [*path, name], Context(sub, info_name=name, parent=context))
    else:
        yield path, command, context


def _type_name(param: Any) -> str:
    """The Python type a parameter takes, as its annotation reads (``list[str]`` for repeats)."""
    annotation = param.type_descriptor.annotation
    name = getattr(annotation, "__name__", None) if not hasattr(annotation, "__args__") else None
    text = name or str(annotation).replace("typing.", "").replace("pathlib.", "")
    return {"Path": "path", "str": "text", "int": "integer", "float": "number",
            "bool": "flag"}.get(text, text)


def _default(param: Any) -> str:
    default = param.default
    if default is None or default == () or default == [] or getattr(param, "required", False):
        return ""
    if isinstance(default, bool):
        return "on" if default else "off"
    return f"`{default}`"


def cli_page() -> str:
    """``docs/reference/cli.md``: each command's usage and a table of its parameters."""
    import typer
    from typer._click.core import Context

    from openmsd.cli import app

    root = typer.main.get_command(app)
    context = Context(root, info_name="openmsd")
    lines = ["# Command line", "",
             "Every `openmsd` command, its arguments and options, generated from the command "
             "line itself (`python scripts/docs_reference.py`); `openmsd COMMAND --help` prints "
             "the same. Each command's guide says when to use it.", ""]
    found = list(_commands(root, ["openmsd"], context))
    lines += ["| command | what it does |", "|---|---|"]
    for words, command, _ in found:
        anchor = "-".join(words)
        lines.append(f"| [`{' '.join(words)}`](#{anchor}) | "
                     f"{_cell((command.help or '').split(chr(10))[0])} |")
    lines.append("")
    for words, command, ctx in found:
        lines += [f"## {' '.join(words)} {{#{'-'.join(words)}}}", ""]
        help_text = (command.help or "").strip()
        if help_text:
            lines += [" ".join(p.split()) + "\n" for p in help_text.split("\n\n")]
        usage = command.get_usage(ctx).replace("Usage: ", "")
        lines += ["```", usage.strip(), "```", ""]
        params = [p for p in command.params if not getattr(p, "hidden", False)]
        if params:
            lines += ["| argument or option | type | default | description |",
                      "|---|---|---|---|"]
            for param in params:
                if type(param).__name__.endswith("Argument"):
                    names = f"`{param.name.upper()}`" + ("" if param.required else " (optional)")
                else:
                    names = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
                    if getattr(param, "multiple", False):
                        names += " (repeatable)"
                lines.append(f"| {names} | {_cell(_type_name(param))} | {_default(param)} | "
                             f"{_cell(getattr(param, 'help', ''))} |")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def openapi_schema() -> dict[str, Any]:
    """The OpenAPI schema ``openmsd serve`` publishes at ``/openapi.json`` (no corpus needed:
    the same routers on an app of the same title and description)."""
    from fastapi import FastAPI

    from openmsd.server import api, pages

    app = FastAPI(title="openmsd", version="0.1.0",
                  description="Related papers across languages, free-text search and "
                  "citation recommendation over an openmsd corpus.")
    app.include_router(api.router)
    app.include_router(pages.router)
    return app.openapi()


def _schema_type(schema: dict[str, Any], components: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "anyOf" in schema:
        return " or ".join(_schema_type(s, components) for s in schema["anyOf"])
    if schema.get("type") == "array":
        return f"list of {_schema_type(schema.get('items', {}), components)}"
    return schema.get("type", "any")


def _summary(op: dict[str, Any]) -> str:
    """A route's first sentence of description (FastAPI's summary is the function's name)."""
    text = " ".join((op.get("description") or "").split("\n\n")[0].split())
    return text.split(". ")[0].rstrip(".") if text else op.get("summary", "")


def api_page(schema: dict[str, Any]) -> str:
    """``docs/reference/api.md``: each route's method, parameters, body and responses."""
    components = schema.get("components", {}).get("schemas", {})
    lines = ["# HTTP API", "",
             "The JSON API that `openmsd serve CORPUS` answers on (http://127.0.0.1:8000 by "
             "default), generated from its OpenAPI schema (`python scripts/docs_reference.py`). "
             "The server publishes the same schema at `/openapi.json`; it is also "
             "[here](openapi.json). Routes that take a body are **POST** only: "
             "a `GET` on them answers 405 Method Not Allowed.", ""]
    routes = [(path, method, op) for path, item in schema["paths"].items()
              for method, op in item.items()]
    api_routes = [r for r in routes if r[0].startswith(("/api", "/healthz"))]
    pages = [r for r in routes if r not in api_routes]
    lines += ["| method | path | what it answers |", "|---|---|---|"]
    for path, method, op in api_routes:
        anchor = f"{method}-{path}".lower().replace("/", "-").replace("{", "").replace(
            "}", "").replace(":", "-").replace("_", "-").strip("-")
        op["_anchor"] = anchor
        lines.append(f"| {method.upper()} | [`{path}`](#{anchor}) | {_cell(_summary(op))} |")
    lines.append("")
    for path, method, op in api_routes:
        lines += [f"## {method.upper()} `{path}` {{#{op['_anchor']}}}", ""]
        description = (op.get("description") or "").strip()
        if description:
            lines += [description, ""]
        params = op.get("parameters", [])
        if params:
            lines += ["| parameter | in | type | required | default | description |",
                      "|---|---|---|---|---|---|"]
            for p in params:
                s = p.get("schema", {})
                default = f"`{s['default']}`" if "default" in s and s["default"] is not None \
                    else ""
                lines.append(f"| `{p['name']}` | {p['in']} | {_schema_type(s, components)} | "
                             f"{'yes' if p.get('required') else ''} | {default} | "
                             f"{_cell(p.get('description') or s.get('description'))} |")
            lines.append("")
        body = op.get("requestBody", {}).get("content", {})
        for media, content in body.items():
            lines += [f"Request body (`{media}`): "
                      f"{_schema_type(content.get('schema', {}), components)}.", ""]
            for example in (content.get("examples") or {}).values():
                value = example.get("value", example)
                lines += ["```json", json.dumps(value, indent=2, ensure_ascii=False), "```", ""]
            if "example" in content:
                lines += ["```json", json.dumps(content["example"], indent=2,
                                                ensure_ascii=False), "```", ""]
        responses = op.get("responses", {})
        if responses:
            cells = []
            for code, response in responses.items():
                media = next(iter(response.get("content", {}) or {}), "")
                target = (response.get("content", {}).get(media, {}) or {}).get("schema", {})
                kind = _schema_type(target, components) if target else ""
                cells.append(f"{code} {response.get('description', '')}"
                             + (f" ({kind})" if kind and kind != "any" else ""))
            lines += ["Responses: " + "; ".join(cells) + ".", ""]
        op.pop("_anchor", None)
    if components:
        lines += ["## Schemas", ""]
        for name, component in components.items():
            lines += [f"### {name} {{#{name.lower()}}}", ""]
            if component.get("description"):
                lines += [" ".join(component["description"].split()), ""]
            props = component.get("properties", {})
            if props:
                required = set(component.get("required", []))
                lines += ["| field | type | required | description |", "|---|---|---|---|"]
                for field, s in props.items():
                    lines.append(f"| `{field}` | {_schema_type(s, components)} | "
                                 f"{'yes' if field in required else ''} | "
                                 f"{_cell(s.get('description') or s.get('title'))} |")
                lines.append("")
    if pages:
        lines += ["## Web pages", "", "The server also answers these HTML pages (the web app):",
                  ""]
        lines += [f"- {method.upper()} `{path}`: {_cell(_summary(op))}"
                  for path, method, op in pages]
    return "\n".join(lines).rstrip() + "\n"


def pages() -> dict[Path, str]:
    """Every generated page by its path, with the text this code writes there."""
    sys.path.insert(0, str(Path(__file__).parent))
    from benchmarks_page import benchmarks_page, render_blocks

    schema = openapi_schema()
    guides = {path: render_blocks(path.read_text(encoding="utf-8"))
              for path in sorted((ROOT / "docs").rglob("*.md"))
              if "<!-- record:" in path.read_text(encoding="utf-8")}
    return {REFERENCE / "cli.md": cli_page(),
            REFERENCE / "api.md": api_page(json.loads(json.dumps(schema))),
            REFERENCE / "openapi.json": json.dumps(schema, indent=2, ensure_ascii=False) + "\n",
            ROOT / "docs" / "benchmarks.md": benchmarks_page(), **guides}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 naming each page that differs")
    args = parser.parse_args()
    stale = []
    for path, text in pages().items():
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            continue
        stale.append(path)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(path.suffix + ".tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)
    for path in stale:
        print(f"{'stale' if args.check else 'wrote'}: {path.relative_to(ROOT)}")
    if args.check and stale:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
