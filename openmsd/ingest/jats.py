"""JATS XML journal articles (as published by SciELO, PubMed Central and others), one per file.

One file holds one ``<article>`` (gzip allowed). The reader yields, in this order:

* one ``paper``: ``front/article-meta`` gives the DOI (``article-id[@pub-id-type='doi']``), the
  other ids (``pmid``, ``pmcid``, ``publisher-id``: SciELO PIDs become ``scielo:`` aliases, other
  publisher ids ``jats:``), ``article-title``, the main ``abstract`` (the first one without
  ``abstract-type``; graphical abstracts, key points and the like are skipped), keywords (the
  ``kwd-group`` in the article's ``xml:lang`` or with none), categories (``subject``), year
  (the earliest ``pub-date``), authors
  (``contrib[@contrib-type='author']``), venue (``journal-title``) and ``declared_language``
  (``article/@xml:lang``). Translations come from ``trans-title-group``, ``trans-abstract``,
  other-language ``abstract``/``kwd-group`` and ``sub-article[@article-type='translation']``
  (their ``front-stub``), merged by language. ``full_text`` is the main ``body``: section titles
  and outermost paragraphs joined by blank lines (sub-articles such as translations and
  reviewer reports are left out and counted).
* one ``reference`` per ``ref`` of the main ``back/ref-list``: ``ref_id`` is ``ref/@id``,
  ``targets`` the DOI (``pub-id[@pub-id-type='doi']``, else a ``doi.org`` link in ``ext-link``,
  else a DOI written in the citation text) and the PMID, title ``article-title`` (or
  ``chapter-title``, or ``source`` for books, when it then is no venue), authors from the author
  ``person-group``, ``year``, venue ``source``, and ``raw`` the ``mixed-citation`` text.
* one ``context`` per cited id of each ``xref[@ref-type='bibr']`` in the main body (``rid`` may
  list several ids): ``text`` is the enclosing outermost paragraph ``<p>`` (or, for markers
  outside paragraphs, the nearest enclosing block such as a table cell), whitespace collapsed,
  and ``position`` is the character offset in that *paragraph text* where the marker's own text
  starts (not an offset in ``full_text``).

The key is the DOI, else the first SciELO PID (``scielo:S0104-...``), else the first other
publisher id (``jats:...``); a file with none of them is reported and skipped.
Parsing never loads DTDs nor touches the network; an entity the document's internal DTD subset
declares is read as declared (one level), others a DTD would define are decoded as HTML
entities. Example (abridged)::

    <article article-type="research-article" xml:lang="pt">
      <front><journal-meta><journal-title-group><journal-title>Hoehnea</journal-title>...
        <article-meta><article-id pub-id-type="doi">10.1590/2236-8906-108/2020</article-id>
          <title-group><article-title>...</article-title>
            <trans-title-group xml:lang="en"><trans-title>...</trans-title></trans-title-group>
          </title-group> ... <abstract><title>Resumo</title><p>...</p></abstract>
          <trans-abstract xml:lang="en"><title>Abstract</title><p>...</p></trans-abstract>
      </article-meta></front>
      <body><sec><title>Introdução</title><p>... (<xref ref-type="bibr" rid="B3">Silva
        2010</xref>) ...</p></sec></body>
      <back><ref-list><ref id="B3"><mixed-citation>SILVA, J. 2010. ...</mixed-citation>
        <element-citation publication-type="journal">...</element-citation></ref></ref-list></back>
    </article>
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from lxml import etree

from openmsd.corpus import Record
from openmsd.identifiers import alias, aliases, dois_in_text, normalize_doi, paper_key
from openmsd.ingest.reader import Reader, as_year, parse_xml
from openmsd.report import Report

FORMAT = "jats"

XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
XLINK_HREF = "{http://www.w3.org/1999/xlink}href"

# Abstract types that are not the paper's abstract proper.
SECONDARY_ABSTRACTS = {"graphical", "key-points", "teaser", "web-summary", "toc", "video",
                       "highlights"}
# Inline tags: a marker inside them belongs to the enclosing block.
INLINE = {"sup", "sub", "italic", "bold", "sc", "underline", "monospace", "named-content",
          "styled-content", "inline-formula", "xref", "ext-link", "uri", "roman", "sans-serif",
          "overline", "strike"}
# Block tags: their text is separated from what surrounds it.
BLOCK = {"p", "title", "sec", "list-item", "list", "td", "th", "tr", "label", "caption",
         "disp-quote", "def", "term", "def-item", "attrib", "fn", "table-wrap", "fig",
         "boxed-text", "disp-formula"}

_SCIELO_PID = re.compile(r"^(?:S\d{4}-[\dX]{4}\d{13}|[A-Za-z0-9]{23})$")
def tag_name(node: Any) -> str:
    """The local name of an element ('' for comments, processing instructions, entities)."""
    tag = node.tag
    return etree.QName(tag).localname if isinstance(tag, str) else ""


#: The most characters an entity of the document's own DTD subset is read as.
MAX_ENTITY_TEXT = 10_000


def entity_text(entity: Any) -> str:
    """The text of an entity reference the parser left unresolved: as the document's internal
    DTD subset declares it (``<!DOCTYPE article [<!ENTITY journal "...">]>``; one level, its
    character references decoded, at most :data:`MAX_ENTITY_TEXT` characters, so no nesting
    amplifies it), else as an HTML entity (``&ndash;``, which the JATS DTD defines)."""
    dtd = entity.getroottree().docinfo.internalDTD
    for declared in dtd.iterentities() if dtd is not None else ():
        if declared.name == entity.name and declared.content is not None:
            return html.unescape(declared.content[:MAX_ENTITY_TEXT])
    return html.unescape(entity.text)


def flatten(element: Any, skip: Iterable[str] = (),
            marks: Iterable[Any] = ()) -> tuple[str, dict[Any, int]]:
    """The text of an element with whitespace collapsed, and where each marked element starts.

    Elements named in ``skip`` contribute no text (their tails do); unresolved entities are
    decoded as HTML entities; block elements are separated by a space. Returns the text and
    ``{marked element: character offset}``.
    """
    skip, marked = set(skip), set(marks)
    parts: list[str] = []
    state = {"length": 0, "space": False}
    offsets: dict[Any, int] = {}

    def add(chunk: str | None) -> None:
        if not chunk:
            return
        words = chunk.split()
        if chunk[0].isspace():
            state["space"] = True
        if words:
            if state["space"] and state["length"]:
                parts.append(" ")
                state["length"] += 1
            joined = " ".join(words)
            parts.append(joined)
            state["length"] += len(joined)
            state["space"] = chunk[-1].isspace()

    def walk(node: Any) -> None:
        if node in marked:
            if state["space"] and state["length"]:
                parts.append(" ")
                state["length"] += 1
                state["space"] = False
            offsets[node] = state["length"]
        block = tag_name(node) in BLOCK
        if block:
            state["space"] = True
        add(node.text)
        for child in node:
            if child.tag is etree.Entity:
                add(entity_text(child))
            elif isinstance(child.tag, str) and tag_name(child) not in skip:
                walk(child)
            add(child.tail)
        if block:
            state["space"] = True

    walk(element)
    text = "".join(parts)
    return text, {node: min(offset, len(text)) for node, offset in offsets.items()}


def _text(element: Any, skip: Iterable[str] = ("xref",)) -> str | None:
    """Collapsed text of an element (footnote markers left out by default), None if empty."""
    if element is None:
        return None
    return flatten(element, skip)[0] or None


def _lang(element: Any) -> str | None:
    value = element.get(XML_LANG)
    return value.strip().lower() if value and value.strip() else None


def _abstract_text(abstract: Any) -> str | None:
    """An abstract's text without its heading; section titles kept as run-in heads."""
    pieces: list[str] = []
    for child in abstract:
        name = tag_name(child)
        if name == "title" or not name:
            continue
        if name == "sec":
            head = _text(child.find("title"))
            body = " ".join(t for t in (_text(c) for c in child if tag_name(c) != "title") if t)
            if head and body and head[-1].isalnum():
                head += ":"
            piece = " ".join(t for t in (head, body) if t)
        else:
            piece = _text(child)
        if piece:
            pieces.append(piece)
    return " ".join(pieces) or None


def _main_abstract(abstracts: list[Any], report: Report) -> Any:
    """The untyped abstract, else the first one that is not graphical or key points."""
    chosen = next((a for a in abstracts if not a.get("abstract-type")), None)
    if chosen is None:
        chosen = next((a for a in abstracts
                       if a.get("abstract-type") not in SECONDARY_ABSTRACTS), None)
    skipped = sum(1 for a in abstracts if a is not chosen)
    if skipped:
        report.count("jats.abstracts_secondary_skipped", skipped)
    return chosen


def _keywords(group: Any) -> list[str]:
    return [k for k in (_text(kwd) for kwd in group.iter("kwd")) if k]


def _person(element: Any) -> str | None:
    """``'Given Surname Suffix'`` of a ``name``; the text of a ``string-name`` or ``collab``."""
    if tag_name(element) == "name":
        parts = [_text(element.find(tag)) for tag in ("given-names", "surname", "suffix")]
        return " ".join(p for p in parts if p) or None
    return _text(element)


def _authors(container: Any) -> list[str]:
    """Names of the author contribs of an article-meta or front-stub."""
    out = []
    for contrib in container.iterfind("contrib-group/contrib[@contrib-type='author']"):
        for child in contrib:
            if tag_name(child) in ("name", "string-name", "collab"):
                name = _person(child)
                if name:
                    out.append(name)
                break
            if tag_name(child) == "name-alternatives":
                name = next((_person(n) for n in child if tag_name(n) == "name"), None)
                if name:
                    out.append(name)
                break
    return out


def _year(meta: Any) -> int | None:
    """The earliest year of the ``pub-date`` elements (online-first or issue, whichever came
    first; SciELO re-publications carry a late ``pub`` date and the original issue year)."""
    years = [as_year(_text(date.find("year"))) for date in meta.iterfind("pub-date")]
    return min((y for y in years if y), default=None)


def _translations(article: Any, meta: Any, language: str | None,
                  report: Report) -> list[dict[str, Any]]:
    """Translated titles, abstracts and keywords of the article, merged by language."""
    found: dict[str, dict[str, Any]] = {}

    def entry(lang: str | None) -> dict[str, Any] | None:
        if not lang or lang == language:
            return None
        return found.setdefault(lang, {"language": lang, "title": None, "abstract": None,
                                       "keywords": []})

    for group in meta.iterfind("title-group/trans-title-group"):
        slot = entry(_lang(group))
        if slot is not None and not slot["title"]:
            slot["title"] = _text(group.find("trans-title"))
    abstracts = [a for a in meta.iterfind("trans-abstract")]
    abstracts += [a for a in meta.iterfind("abstract") if _lang(a) not in (None, language)]
    for abstract in abstracts:
        if abstract.get("abstract-type") in SECONDARY_ABSTRACTS:
            report.count("jats.abstracts_secondary_skipped")
            continue
        slot = entry(_lang(abstract))
        if slot is not None and not slot["abstract"]:
            slot["abstract"] = _abstract_text(abstract)
    for group in meta.iterfind("kwd-group"):
        slot = entry(_lang(group))
        if slot is not None and not slot["keywords"]:
            slot["keywords"] = _keywords(group)
    for sub in article.iterfind("sub-article"):
        if sub.get("article-type") != "translation":
            report.count(f"jats.sub_articles_ignored.{sub.get('article-type') or 'untyped'}")
            continue
        lang = _lang(sub)
        stub = sub.find("front-stub")
        if stub is None:
            stub = sub.find("front/article-meta")
        slot = entry(lang)
        if slot is None or stub is None:
            report.count("jats.sub_articles_ignored.translation")
            continue
        report.count("jats.translation_sub_articles")
        if not slot["title"]:
            slot["title"] = _text(stub.find("title-group/article-title"))
        if not slot["abstract"]:
            main = _main_abstract([a for a in stub.iterfind("abstract")
                                   if _lang(a) in (None, lang)], report)
            slot["abstract"] = _abstract_text(main) if main is not None else None
        if not slot["keywords"]:
            group = next((g for g in stub.iterfind("kwd-group") if _lang(g) in (None, lang)),
                         None)
            slot["keywords"] = _keywords(group) if group is not None else []
    return [found[lang] for lang in sorted(found)
            if found[lang]["title"] or found[lang]["abstract"] or found[lang]["keywords"]]


def _ids(meta: Any) -> tuple[str | None, list[tuple[str, str]]]:
    """The article's DOI and its other identifiers as ``(namespace, value)`` pairs."""
    doi = None
    ids: list[tuple[str, str]] = []
    for node in meta.iterfind("article-id"):
        kind, value = node.get("pub-id-type"), _text(node)
        if not value:
            continue
        if kind == "doi":
            doi = doi or value
        elif kind in ("pmid", "pmcid"):
            ids.append((kind, value))
        elif kind == "publisher-id":
            ids.append(("scielo" if _SCIELO_PID.match(value) else "jats", value))
    return doi, ids


def _key(doi: str | None, ids: list[tuple[str, str]]) -> str | None:
    """DOI, else the first SciELO PID, else the first other publisher id."""
    for namespace in ("scielo", "jats"):
        for name, value in ids:
            if name == namespace:
                return paper_key(doi, namespace, value)
    return paper_key(doi, None, None)


def _paper(article: Any, path: Path, report: Report) -> dict[str, Any] | None:
    meta = article.find("front/article-meta")
    if meta is None:
        report.problem(path, f"line {article.sourceline}",
                       "missing required element: front/article-meta")
        return None
    doi, ids = _ids(meta)
    key = _key(doi, ids)
    if key is None:
        report.problem(path, f"line {meta.sourceline}",
                       "missing required field: article-id (doi or publisher-id)")
        return None
    language = _lang(article)
    abstracts = [a for a in meta.iterfind("abstract") if _lang(a) in (None, language)]
    main = _main_abstract(abstracts, report)
    keywords = next((_keywords(g) for g in meta.iterfind("kwd-group")
                     if _lang(g) in (None, language)), [])
    body = article.find("body")
    return {
        "key": key,
        "aliases": sorted({*aliases(doi, {}), *(a for a in (alias(ns, v) for ns, v in ids) if a)}),
        "doi": normalize_doi(doi),
        "title": _text(meta.find("title-group/article-title")),
        "abstract": _abstract_text(main) if main is not None else None,
        "declared_language": language,
        "year": _year(meta),
        "venue": _text(article.find("front/journal-meta/journal-title-group/journal-title"))
        or _text(article.find("front/journal-meta/journal-title")),
        "authors": _authors(meta),
        "keywords": keywords,
        "categories": [s for s in (_text(x) for x in meta.iterfind("article-categories//subject"))
                       if s],
        "translations": _translations(article, meta, language, report),
        "full_text": _full_text(body) if body is not None else None,
        "doc_type": article.get("article-type") or None,
        "source": FORMAT,
        "loc": f"{path.name}:{article.sourceline}",
    }


def body_paragraphs(body: Any) -> Iterator[Any]:
    """Section titles and outermost paragraphs of a body, in document order."""
    for node in body.iter("p", "title"):
        if any(tag_name(a) == "p" for a in node.iterancestors()):
            continue
        if tag_name(node) == "title" and tag_name(node.getparent()) != "sec":
            continue
        yield node


def _full_text(body: Any) -> str | None:
    texts = [t for t in (_text(p, ()) for p in body_paragraphs(body)) if t]
    return "\n\n".join(texts) or None


def _ref_fields(ref: Any) -> dict[str, Any]:
    """Title, authors, year, venue, raw text and DOIs of one ``ref``."""
    mixed = ref.find("mixed-citation")
    cited = ref.find("element-citation")
    for candidate in (mixed, ref.find("citation"), ref.find("nlm-citation")):
        if cited is None:
            cited = candidate
    if cited is None:
        cited = ref
    raw = _text(mixed, ()) if mixed is not None else None
    title = next((t for t in (_text(cited.find(f".//{tag}"))
                              for tag in ("article-title", "chapter-title", "part-title")) if t),
                 None)
    source = _text(cited.find(".//source"))
    groups = [g for g in cited.iter("person-group")
              if g.get("person-group-type") in (None, "author")]
    names = [n for g in groups for n in g if tag_name(n) in ("name", "string-name", "collab")]
    if not groups:
        names = [n for n in cited if tag_name(n) in ("name", "string-name", "collab")]
    dois = [d for node in ref.iter("pub-id") if node.get("pub-id-type") == "doi"
            for d in dois_in_text(_text(node))]
    how = "pub-id"
    if not dois:
        how = "ext-link"
        dois = [d for node in ref.iter("ext-link", "uri")
                for link in (node.get(XLINK_HREF), _text(node))
                if link and "doi.org/" in link.lower() for d in dois_in_text(link)]
    if not dois:
        how = "text"
        dois = dois_in_text(raw)
    pmids = [_text(node) for node in ref.iter("pub-id") if node.get("pub-id-type") == "pmid"]
    targets = [f"doi:{d}" for d in dict.fromkeys(dois)]
    targets += [a for a in (alias("pmid", p) for p in pmids) if a and a not in targets]
    return {
        "title": title or source,
        "authors": [a for a in (_person(n) for n in names) if a],
        "year": as_year(_text(cited.find(".//year"))),
        "venue": source if title else None,
        "raw": raw,
        "targets": targets,
        "doi_from": how if dois else None,
    }


def _references(article: Any, key: str, path: Path,
                report: Report) -> tuple[list[dict[str, Any]], set[str]]:
    out = []
    for position, ref in enumerate(article.iterfind("back/ref-list//ref")):
        fields = _ref_fields(ref)
        how = fields.pop("doi_from")
        report.count("jats.references")
        if how:
            report.count(f"jats.references_doi_from_{how}")
        else:
            report.count("jats.references_without_doi")
        ref_id = ref.get("id")
        if not ref_id:
            report.count("jats.references_without_id")
        out.append({"citing": key, "position": position, "ref_id": ref_id, **fields,
                    "source": FORMAT, "loc": f"{path.name}:{ref.sourceline}"})
    return out, {r["ref_id"] for r in out if r["ref_id"]}


def _block(xref: Any) -> Any:
    """The outermost paragraph around a marker, else its nearest non-inline ancestor."""
    paragraphs = [a for a in xref.iterancestors() if tag_name(a) == "p"]
    if paragraphs:
        return paragraphs[-1]
    return next(a for a in xref.iterancestors() if tag_name(a) not in INLINE)


def _contexts(body: Any, key: str, ref_ids: set[str], path: Path,
              report: Report) -> Iterator[dict[str, Any]]:
    xrefs = [x for x in body.iter("xref") if x.get("ref-type") == "bibr"]
    blocks: dict[Any, list[Any]] = {}
    owner = {xref: _block(xref) for xref in xrefs}
    for xref, block in owner.items():
        blocks.setdefault(block, []).append(xref)
    flat = {block: flatten(block, (), marks) for block, marks in blocks.items()}
    for xref in xrefs:
        block = owner[xref]
        text, offsets = flat[block]
        if tag_name(block) != "p":
            report.count("jats.contexts_outside_paragraph")
        rids = (xref.get("rid") or "").split()
        if not rids:
            report.problem(path, f"line {xref.sourceline}",
                           "citation marker without rid: xref has no reference id",
                           kind="warning")
        for rid in rids:
            if rid not in ref_ids:
                report.problem(path, f"line {xref.sourceline}",
                               f"unknown reference id: rid {rid!r} is not in the ref-list",
                               kind="warning")
            report.count("jats.contexts")
            yield {"citing": key, "ref_id": rid, "text": text, "position": offsets[xref],
                   "source": FORMAT, "loc": f"{path.name}:{xref.sourceline}"}


def read(path: Path, report: Report) -> Iterator[Record]:
    """Yield the paper, its references and its citation contexts from one JATS file."""
    article = parse_xml(path, report)
    if article is None:
        return
    if tag_name(article) != "article":
        report.problem(path, f"line {article.sourceline}",
                       f"not a JATS article: root element is <{tag_name(article)}>")
        return
    paper = _paper(article, path, report)
    if paper is None:
        return
    report.count("jats.papers")
    if paper["translations"]:
        report.count("jats.papers_with_translations")
    yield "paper", paper
    references, ref_ids = _references(article, paper["key"], path, report)
    for reference in references:
        yield "reference", reference
    body = article.find("body")
    if body is not None:
        for context in _contexts(body, paper["key"], ref_ids, path, report):
            yield "context", context


_PROLOG = re.compile(rb"^(?:\xef\xbb\xbf)?\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*"
                     rb"(?P<doctype><!DOCTYPE\s+article[^>\[]*(?:\[.*?\]\s*)?>\s*)?"
                     rb"(?:<!--.*?-->\s*)*<article[\s>]",
                     re.DOTALL)


def sniff(head: bytes, path: Path) -> bool:
    """A document whose root is ``<article>``, with a JATS/NLM doctype or JATS front matter."""
    match = _PROLOG.match(head)
    if not match:
        return False
    doctype = match.group("doctype") or b""
    if b"JATS" in doctype or b"NLM" in doctype:
        return True
    return b"<front>" in head or b"<article-meta" in head or b"<journal-meta" in head


READER = Reader(FORMAT, sniff, read, "JATS XML: one journal article per file (SciELO, PMC)")
