"""A watch (:mod:`openmsd.search.watch`) as an Atom feed (RFC 4287) and as a self-contained
HTML digest, both written with lxml: every title and reason is XML text, escaped by the
serializer, with the characters XML forbids removed.

Each Atom entry is one new paper: its id (the DOI's URL, else ``urn:openmsd:paper:ID``), title,
``updated`` (when it entered the corpus), a link (the DOI, or the paper's page of ``openmsd
serve`` when a base URL is given), its language as a category and a summary saying its
language, year, venue, DOI, score and why it was ranked.
"""

from __future__ import annotations

from datetime import datetime
from urllib.parse import quote

from lxml import etree
from lxml.html import builder as E

from openmsd.identifiers import doi_url
from openmsd.present.xml_text import xml_text
from openmsd.search import LibraryResult, Watch

__all__ = ["ATOM_NS", "atom", "digest_html", "entry_link", "nothing_new"]

ATOM_NS = "http://www.w3.org/2005/Atom"
_STYLE = """body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;
color:#1a1a1a;line-height:1.45}li{margin:0 0 1rem}.meta{color:#555;font-size:.9rem}
.why{background:#eef3f8;border-radius:3px;padding:0 .3rem;margin-right:.3rem;font-size:.85rem}
.english{color:#444;font-style:italic}.lang{font-weight:bold}"""


def nothing_new(found: Watch) -> str:
    """The sentence for a watch without new papers: ``nothing new since DATE``."""
    since = found.since.strftime("%Y-%m-%d %H:%M UTC") if found.since else "the start"
    return f"nothing new since {since}"


def entry_link(result: LibraryResult, base_url: str | None = None) -> str | None:
    """Where an entry links: the paper's page under ``base_url`` (``""``: a link relative to
    the server's root), else its DOI, else None."""
    if base_url is not None:
        return base_url.rstrip("/") + "/papers/" + quote(result.paper_id, safe="")
    if result.doi:
        return doi_url(result.doi)
    return None


def _summary(result: LibraryResult) -> str:
    parts = [f"language: {result.language or 'und'}", f"year: {result.year or 'unknown'}"]
    if result.venue:
        parts.append(f"venue: {result.venue}")
    if result.doi:
        parts.append(f"DOI: {result.doi}")
    parts.append(f"score: {result.score:.3f}")
    if result.english_title and result.english_title != result.title:
        parts.append(f"English title: {result.english_title}")
    if result.why:
        parts.append("why: " + "; ".join(result.why))
    return xml_text(" · ".join(parts))


def _sub(parent: etree._Element, tag: str, text: str | None = None, **attrs: str
         ) -> etree._Element:
    element = etree.SubElement(parent, f"{{{ATOM_NS}}}{tag}",
                               {k: xml_text(v) for k, v in attrs.items()})
    if text is not None:
        element.text = xml_text(text)
    return element


def _stamp(when: datetime) -> str:
    return when.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def atom(found: Watch, title: str, base_url: str | None = None,
         self_url: str | None = None) -> bytes:
    """The watch as an Atom feed document (UTF-8 bytes); empty, and valid, when nothing is
    new."""
    feed = etree.Element(f"{{{ATOM_NS}}}feed", nsmap={None: ATOM_NS})
    _sub(feed, "id", f"urn:openmsd:watch:{found.name}")
    _sub(feed, "title", title)
    _sub(feed, "subtitle", (f"{found.new} new papers" if found.new else nothing_new(found))
         + f", ranked for a library of {len(found.positive)} papers")
    _sub(feed, "updated", _stamp(found.watched))
    author = _sub(feed, "author")
    _sub(author, "name", "openmsd")
    _sub(feed, "generator", "openmsd")
    if self_url:
        _sub(feed, "link", rel="self", href=self_url, type="application/atom+xml")
    for result in found.results:
        entry = _sub(feed, "entry")
        _sub(entry, "id", doi_url(result.doi)
             if result.doi else "urn:openmsd:paper:" + quote(result.paper_id, safe=""))
        title_element = _sub(entry, "title", result.title or result.english_title
                             or result.paper_id)
        title_element.set("type", "text")
        if result.language:
            title_element.set("{http://www.w3.org/XML/1998/namespace}lang",
                              xml_text(result.language))
        _sub(entry, "updated", _stamp(found.arrived[result.paper_id]))
        link = entry_link(result, base_url)
        if link:
            _sub(entry, "link", rel="alternate", href=link)
        if result.doi and base_url is not None:
            _sub(entry, "link", rel="related", href=doi_url(result.doi))
        _sub(entry, "category", term=result.language or "und", label="language")
        _sub(entry, "summary", _summary(result)).set("type", "text")
    return etree.tostring(feed, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def digest_html(found: Watch, title: str, base_url: str | None = None) -> str:
    """The watch as one self-contained HTML page (its style inline, no script)."""
    items = []
    for result in found.results:
        link = entry_link(result, base_url)
        name = xml_text(result.title or result.english_title or result.paper_id)
        heading = E.A(name, href=link) if link else E.STRONG(name)
        if result.language:
            heading.set("lang", xml_text(result.language))
        parts = [heading]
        if result.english_title and result.english_title != result.title:
            parts.append(E.DIV(xml_text(result.english_title), E.CLASS("english")))
        meta = [E.SPAN(xml_text(result.language or "und"), E.CLASS("lang")),
                " · " + xml_text(result.year or "year unknown")]
        if result.venue:
            meta.append(" · " + xml_text(result.venue))
        if result.doi:
            meta.append(" · doi:" + xml_text(result.doi))
        meta.append(f" · score {result.score:.3f} · entered "
                    f"{_stamp(found.arrived[result.paper_id])}")
        parts.append(E.DIV(*meta, E.CLASS("meta")))
        if result.why:
            parts.append(E.DIV(*[E.SPAN(xml_text(w), E.CLASS("why")) for w in result.why]))
        items.append(E.LI(*parts))
    since = found.since.strftime("%Y-%m-%d %H:%M UTC") if found.since else "the start"
    lead = (f"{found.new} papers entered the corpus since {since}; the first "
            f"{len(found.results)}, ranked for a library of {len(found.positive)} papers"
            + (f" (away from {len(found.negative)})" if found.negative else "") + "."
            if found.new else nothing_new(found) + ".")
    body = [E.H1(xml_text(title)), E.P(lead)]
    body.append(E.OL(*items) if items else E.P("No new papers."))
    if found.unranked:
        body.append(E.P(f"{len(found.unranked)} new papers have no vector (no title or "
                        "abstract) and are not ranked."))
    page = E.HTML(E.HEAD(E.META(charset="utf-8"),
                         E.META(name="viewport", content="width=device-width, initial-scale=1"),
                         E.TITLE(xml_text(title)), E.STYLE(_STYLE)),
                  E.BODY(*body), lang="en")
    return "<!doctype html>\n" + etree.tostring(page, encoding="unicode", method="html")
