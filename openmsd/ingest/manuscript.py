"""Manuscripts to recommend citations for: plain text, Markdown, LaTeX, JATS XML, unarXive JSON.

:func:`read_manuscript` turns a file into paragraphs of plain text in which every citation
marker is one that :mod:`openmsd.ingest.markers` recognises:

* plain text (``.txt``) and Markdown (``.md``; markdown-it-py, code blocks left out; Pandoc's
  ``[@key]`` kept): markers as written (``[12]``, ``(Smith, 2020)``, ``\\cite{key}``);
* LaTeX (``.tex``; pylatexenc, the body between ``\\begin{document}`` and ``\\end{document}``):
  ``\\cite{a,b}`` and its natbib / biblatex relatives become ``{{cite:a,b}}``;
* JATS XML (an ``<article>``): body paragraphs and section titles; an ``<xref
  ref-type="bibr">`` keeps its label when it is a marker already (``(Silva, 2020)``), a
  numeric label becomes ``[3]``, anything else ``{{cite:RID}}``;
* unarXive JSON / JSONL (an object with ``body_text``): paragraphs with their
  ``{{cite:hash}}`` markers, other ``{{formula:…}}`` markers as ``[FORMULA]`` and so on; in a
  JSONL file of several papers, ``paper`` chooses one (default: the first).

Markers that point nowhere (a JATS ``rid`` missing from the reference list, a unarXive hash
without bibliography entry, an empty ``\\cite{}``) are listed in ``problems`` with their place.

>>> m = read_text("Parsers are fast [3].\\n\\nWe thank the reviewers.", "text")
>>> m.paragraphs
['Parsers are fast [3].', 'We thank the reviewers.']
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from lxml import etree

from openmsd.ingest.jats import body_paragraphs, flatten, tag_name
from openmsd.ingest.markers import MARKER

FORMATS = {"text": (".txt", ".text"), "markdown": (".md", ".markdown"),
           "latex": (".tex", ".latex"), "jats": (".xml", ".nxml"),
           "unarxive": (".json", ".jsonl")}
MAX_BYTES = 20 * 2**20
"""Larger manuscripts are refused (a paper is well under a megabyte of text)."""
CITE_MACROS = ("cite", "citep", "citet", "citealp", "citealt", "citeauthor", "citeyear",
               "parencite", "textcite", "autocite", "footcite", "nocite", "supercite")


class ManuscriptError(ValueError):
    """A manuscript that cannot be read; the message names the file and what was expected."""


@dataclass
class Manuscript:
    """Paragraphs of text with citation markers, the format read, marker problems, and what
    identifies the manuscript itself (``title``, ``ids``: DOI, arXiv or paper id) where the
    file says so, so that it is never recommended to itself."""

    paragraphs: list[str]
    format: str
    problems: list[str] = field(default_factory=list)
    title: str | None = None
    ids: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n\n".join(self.paragraphs)


def paragraphs_of(text: str) -> list[str]:
    """Blank-line separated paragraphs, whitespace collapsed."""
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]


def format_of(path: Path) -> str:
    """The format of ``path`` by its suffix; ManuscriptError naming the supported ones."""
    suffix = path.suffix.lower()
    for name, suffixes in FORMATS.items():
        if suffix in suffixes:
            return name
    supported = ", ".join(f"{n} ({' '.join(s)})" for n, s in FORMATS.items())
    raise ManuscriptError(f"{path}: unsupported manuscript type {suffix or '(no suffix)'!r}; "
                          f"supported: {supported}")


def read_manuscript(path: Path, paper: str | None = None, max_bytes: int = MAX_BYTES
                    ) -> Manuscript:
    """The manuscript in ``path`` (format by suffix, under a ``.gz``; see the module
    docstring)."""
    gzipped = path.suffix.lower() == ".gz"
    kind = format_of(path.with_suffix("") if gzipped else path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise ManuscriptError(f"{path}: {size:,} bytes is more than the {max_bytes:,} a "
                                  "manuscript may have")
        if gzipped:
            with gzip.open(path, "rb") as stream:
                data = stream.read(max_bytes + 1)
            if len(data) > max_bytes:
                raise ManuscriptError(f"{path}: more than the {max_bytes:,} bytes a manuscript "
                                      "may have once decompressed")
        else:
            data = path.read_bytes()
    except (OSError, EOFError, gzip.BadGzipFile) as error:
        reason = getattr(error, "strerror", None) or error
        raise ManuscriptError(f"{path}: cannot read it ({reason})") from None
    if kind == "jats":
        return read_jats(data, path)
    if kind == "unarxive":
        return read_unarxive(data, path, paper)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ManuscriptError(f"{path}: not UTF-8 text (byte {error.start})") from None
    return read_text(text, kind, path)


def read_text(text: str, kind: str = "text", path: Path | str = "<text>") -> Manuscript:
    """A plain-text, Markdown or LaTeX manuscript from its text."""
    if kind == "markdown":
        return Manuscript(_markdown_paragraphs(text), kind)
    if kind == "latex":
        return _latex(text, path)
    return Manuscript(paragraphs_of(text), "text")


def _markdown_paragraphs(text: str) -> list[str]:
    from markdown_it import MarkdownIt  # lazy: markdown_it takes ~0.1 s to import

    out = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type != "inline":
            continue
        parts = []
        for child in token.children or []:
            if child.type in ("text", "code_inline"):
                parts.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                parts.append(" ")
        paragraph = " ".join("".join(parts).split())
        if paragraph:
            out.append(paragraph)
    return out


def _latex(text: str, path: Path | str) -> Manuscript:
    try:
        # optional: the serve extra
        import pylatexenc  # noqa: F401
    except ModuleNotFoundError:
        raise ManuscriptError(f"{path}: reading LaTeX needs pylatexenc: pip install "
                              "'openmsd[serve]' (or pylatexenc)") from None
    # optional: the serve extra
    from pylatexenc import macrospec
    from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec
    from pylatexenc.latex2text import get_default_latex_context_db as text_db
    from pylatexenc.latexwalker import LatexWalker, LatexWalkerError
    from pylatexenc.latexwalker import get_default_latex_context_db as walker_db

    body = re.search(r"\\begin\{document\}(.*?)(?:\\end\{document\}|\Z)", text, re.DOTALL)
    text = body.group(1) if body else text
    problems: list[str] = []

    def cite(node: Any, l2tobj: Any = None) -> str:
        arg = node.nodeargd.argnlist[-1] if node.nodeargd and node.nodeargd.argnlist else None
        keys = arg.latex_verbatim()[1:-1].strip() if arg is not None else ""
        if not keys:
            problems.append(f"{path}: character {node.pos}: \\{node.macroname} without a key")
            return " "
        return "{{cite:" + ",".join(k.strip() for k in keys.split(",")) + "}}"

    walker_context = walker_db()
    walker_context.add_context_category("citrec", prepend=True, macros=[
        macrospec.MacroSpec(m, "*[[{") for m in CITE_MACROS])
    context = text_db()
    context.add_context_category("citrec", prepend=True, macros=[
        MacroTextSpec(m, simplify_repl=cite) for m in CITE_MACROS])
    try:
        nodes, _, _ = LatexWalker(text, latex_context=walker_context,
                                  tolerant_parsing=True).get_latex_nodes()
        plain = LatexNodes2Text(latex_context=context, math_mode="verbatim",
                                strict_latex_spaces=True).nodelist_to_text(nodes)
    except LatexWalkerError as error:
        raise ManuscriptError(f"{path}: cannot parse the LaTeX ({error})") from None
    plain = plain.replace("\xa0", " ")
    return Manuscript(paragraphs_of(plain), "latex", problems)


def read_jats(data: bytes, path: Path | str = "<jats>") -> Manuscript:
    """A JATS article's body paragraphs with its ``xref`` citation markers."""
    try:
        root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True,
                                                      load_dtd=False, huge_tree=False))
    except etree.XMLSyntaxError as error:
        raise ManuscriptError(f"{path}: line {error.lineno}: malformed XML ({error.msg})"
                              ) from None
    if tag_name(root) != "article":
        raise ManuscriptError(f"{path}: not a JATS article: the root element is "
                              f"<{tag_name(root)}>, expected <article>")
    body = root.find("body")
    if body is None:
        raise ManuscriptError(f"{path}: the article has no <body> (no full text)")
    refs = {r.get("id") for r in root.iter("ref") if r.get("id")}
    problems = []
    for xref in list(body.iter("xref")):
        if xref.get("ref-type") != "bibr":
            continue
        rids = (xref.get("rid") or "").split()
        for rid in rids:
            if rid not in refs:
                problems.append(f"{path}: line {xref.sourceline}: xref rid {rid!r} is not in "
                                "the ref-list")
        label = " ".join("".join(xref.itertext()).split())
        if label.isdigit():
            marker = f"[{label}]"
        elif label and MARKER.fullmatch(label):
            marker = label
        elif label and MARKER.fullmatch(f"({label})"):  # Silva et al., 2020
            marker = f"({label})"
        else:
            marker = "{{cite:" + ",".join(rids) + "}}" if rids else ""
        tail = xref.tail
        for child in list(xref):
            xref.remove(child)
        xref.text, xref.tail = f" {marker} ", tail
    paragraphs = [flatten(p)[0] for p in body_paragraphs(body)]
    meta = root.find("front/article-meta")
    title = ids = None
    if meta is not None:
        node = meta.find("title-group/article-title")
        title = " ".join("".join(node.itertext()).split()) if node is not None else None
        ids = [" ".join("".join(n.itertext()).split()) for n in meta.findall("article-id")]
    return Manuscript([p for p in paragraphs if p], "jats", problems, title or None,
                      [i for i in ids or [] if i])


_OTHER_MARKER = re.compile(r"\{\{(formula|figure|table):[^}]*\}\}")


def read_unarxive(data: bytes, path: Path | str = "<unarxive>", paper: str | None = None
                  ) -> Manuscript:
    """One unarXive paper (``paper``: its ``paper_id``; default the first of the file)."""
    record = None
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            if number == 1:  # a pretty-printed single object
                try:
                    obj = orjson.loads(data)
                except orjson.JSONDecodeError as error:
                    raise ManuscriptError(f"{path}: not JSON ({error})") from None
            else:
                raise ManuscriptError(f"{path}: line {number}: not JSON") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("body_text"), list):
            raise ManuscriptError(f"{path}: line {number}: expected a unarXive paper (an "
                                  "object with a 'body_text' list)")
        if paper is None or str(obj.get("paper_id")) == paper:
            record = obj
            break
    if record is None:
        raise ManuscriptError(f"{path}: no paper {paper!r} in the file" if paper else
                              f"{path}: no paper in the file")
    bib = record.get("bib_entries") or {}
    problems, paragraphs = [], []
    for index, item in enumerate(record["body_text"]):
        text = item.get("text") if isinstance(item, dict) else None
        if not isinstance(text, str):
            problems.append(f"{path}: body_text[{index}]: paragraph without text")
            continue
        for key in re.findall(r"\{\{cite:([^}]*)\}\}", text):
            if key not in bib:
                problems.append(f"{path}: body_text[{index}]: cite marker {key!r} has no "
                                "bibliography entry")
        text = _OTHER_MARKER.sub(lambda m: f"[{m.group(1).upper()}]", text)
        paragraphs.extend(paragraphs_of(text))
    meta = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    ids = [str(v) for v in (record.get("paper_id"), meta.get("id"), meta.get("doi")) if v]
    ids += [f"arxiv:{v}" for v in ids[:2]]
    title = meta.get("title") if isinstance(meta.get("title"), str) else None
    return Manuscript(paragraphs, "unarxive", problems, title, list(dict.fromkeys(ids)))
