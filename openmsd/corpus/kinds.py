"""What kind of record a corpus paper is: a paper, or a record that is not one (an erratum, a
retraction notice, an editorial, paratext, a book review, a stub).

A record's kind comes, in this order, from:

1. its source's type (``doc_type``: OpenAlex ``type``, Crossref ``type`` or the type of the
   record its ``update-to`` notice amends, JATS ``article-type``), when that type names a
   non-paper (:data:`SOURCE_TYPES`);
2. its title, in English, Portuguese, Spanish, French, German or Italian: a title that *is* a
   notice ("Errata", "Erratum to: ...", "Correção", "Fe de erratas", "Berichtigung"), an
   editorial ("Editorial", "Éditorial: ...", "Nota do editor"), paratext ("Table of contents",
   "Sumário", "Índice") or a book review heading ("Resenha: ..."); a title that merely contains
   such a word ("Correction of OCR errors in ...") stays a paper;
3. its section heading (JATS ``subject``, kept in ``categories``) when the whole heading is one
   of those words ("Errata", "Editorial", "Resenhas");
4. its content: a record with no abstract (in any language), no full text and no reference is a
   ``stub`` (a bare title, a book's catalogue entry).

Anything else is a ``paper``. :func:`classify` gives ``(kind, reason)``; the reason says which
of the four decided (``jats article-type 'correction'``, ``title 'Errata'``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import pyarrow as pa

__all__ = ["KINDS", "NON_PAPERS", "SOURCE_TYPES", "classify", "kind_of_heading",
           "kind_of_title", "kind_of_type", "record_kinds"]

KINDS = ("paper", "erratum", "retraction", "editorial", "paratext", "book-review", "stub")
"""Every kind a record can be (the ``kind`` column of ``papers.parquet``)."""
NON_PAPERS = KINDS[1:]
"""The kinds that are not papers: left out of related papers, search, watch and recommend
unless asked for."""

SOURCE_TYPES: dict[str, str] = {
    # errata, corrigenda, addenda: notices amending another record
    **dict.fromkeys(["erratum", "errata", "correction", "corrigendum", "addendum",
                     "clarification", "corrected-article"], "erratum"),
    # retraction notices and their kin
    **dict.fromkeys(["retraction", "partial-retraction", "retraction-notice", "withdrawal",
                     "removal", "expression-of-concern"], "retraction"),
    **dict.fromkeys(["editorial", "editorial-material", "foreword", "preface"], "editorial"),
    # front and back matter, issue-level records, reviewer reports, announcements
    **dict.fromkeys(["paratext", "front-matter", "back-matter", "toc", "table-of-contents",
                     "index", "journal-issue", "journal-volume", "journal", "issue",
                     "books-received", "announcement", "calendar", "news", "obituary",
                     "peer-review", "reviewer-report", "in-brief",
                     "supplementary-materials"], "paratext"),
    **dict.fromkeys(["book-review", "product-review"], "book-review"),
}
"""Source types (OpenAlex ``type``, Crossref ``type`` and ``update-to`` types, JATS
``article-type``; compared lowercased, ``_`` and spaces read as ``-``) that name a non-paper."""

# Title words, written without accents, lowercased (titles are compared so).
# A notice whatever follows: a title starting with one of these words.
_NOTICE_START = {
    "erratum": r"errat(um|a|as|e)|fe de errat(as|a)|corrigend(um|a)|berichtigung(en)?"
               r"|rectificatif|addend(um|a)|adend(o|a|um)|nachtrag",
    "retraction": r"notice of retraction|retraction notice|retracted( article)?"
                  r"|artigo retratado|articulo retractado|expression of concern",
}
# A notice only as the whole title, or followed by a separator ("Correction: ...") or by "to"
# ("Correction to ..."): "Correction of OCR errors" is a paper.
_NOTICE_WORDS = {
    "erratum": r"corrections?|correcao|correccao|correccion|correction|korrektur"
               r"|rettifica|errata corrige",
    "retraction": r"retraction|retratacao|retractacion|retractation|ruckzug",
    "editorial": r"editorial|editorials|editoriale|editorial note|editor'?s note"
                 r"|editors'? note|note from the editors?|letter from the editors?"
                 r"|nota editorial|nota do editor|nota dos editores|nota del editor"
                 r"|nota de los editores|nota de la redaccion|carta do editor"
                 r"|carta del editor|note de la redaction|mot de l'editeur"
                 r"|editorial comment|guest editorial",
    "paratext": r"in memoriam|obituary|obituario|nachruf|issue information",
    "book-review": r"book reviews?|resenhas?|resenas?|comptes? rendus?|rezension(en)?"
                   r"|buchbesprechung(en)?|recensione",
}
# Paratext: only as the whole title.
_PARATEXT = (r"table of contents|contents|content|index|indice|indices|indice de autores"
             r"|author index|subject index|index of authors|sumario|sumarios|sommaire"
             r"|table des matieres|inhalt|inhaltsverzeichnis|front matter|back matter"
             r"|frontmatter|backmatter|cover|capa|portada|couverture|expediente"
             r"|masthead|editorial board|conselho editorial"
             r"|comite editorial|comite de redaction|instructions for authors"
             r"|instructions to authors|author guidelines|instrucoes aos autores"
             r"|normas para publicacao|instrucciones para los autores|books received"
             r"|livros recebidos|reviewers|list of reviewers|acknowledgement of reviewers"
             r"|acknowledgment to reviewers|agradecimento aos pareceristas|pareceristas")
# An editorial: only as the whole title (an issue's presentation, a preface).
_EDITORIAL = (r"apresentacao|presentacion|presentation|presentazione|vorwort|avant-propos"
              r"|prefacio|preface|foreword|editors' introduction|introduction to the issue")
_SEPARATOR = r"\s*(:|\.|-|–|—|\||/|\(|\[|$)"
_TITLE_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    *((kind, re.compile(rf"(?:{words})(\b|$)")) for kind, words in _NOTICE_START.items()),
    *((kind, re.compile(rf"(?:{words})({_SEPARATOR}|\s+to\b)"))
      for kind, words in _NOTICE_WORDS.items()),
    ("paratext", re.compile(rf"(?:{_PARATEXT})$")),
    ("editorial", re.compile(rf"(?:{_EDITORIAL})$")),
]
_ANY_TITLE = re.compile("|".join(f"(?:{pattern.pattern})" for _, pattern in _TITLE_PATTERNS))
_HEADINGS: dict[str, str] = {
    **dict.fromkeys(["errata", "erratum", "erratas", "fe de erratas", "corrigendum",
                     "corrigenda", "correction", "corrections", "correcao", "correccion",
                     "adendo", "addendum", "addenda", "berichtigung", "rectificatif"],
                    "erratum"),
    **dict.fromkeys(["retraction", "retractions", "retratacao", "retractacion",
                     "expression of concern"], "retraction"),
    **dict.fromkeys(["editorial", "editoriais", "editoriales", "editorials", "editorial note",
                     "nota editorial", "nota do editor"], "editorial"),
    **dict.fromkeys(["resenha", "resenhas", "resena", "resenas", "book review", "book reviews",
                     "compte rendu", "comptes rendus", "rezension", "rezensionen"],
                    "book-review"),
}


_MARKS = re.compile(r"[\[\]\"*]")


def _folded(text: str) -> str:
    """``text`` lowercased, in ASCII (accents dropped, as are letters of other scripts),
    without brackets, quotes or outer punctuation, its whitespace collapsed: how titles and
    headings are compared.

    >>> _folded("  [ERRATA] ")
    'errata'
    >>> _folded("Correção:  «Título»")
    'correcao: titulo'
    """
    if not text.isascii():  # the words compared are ASCII: accents and other scripts go
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = text.lower()
    text = _MARKS.sub("", text).replace("`", "'")
    return " ".join(text.split()).strip(" .:;,-–—")


def kind_of_type(doc_type: str | None) -> str | None:
    """The non-paper kind a source type names (None: a paper's type, or none).

    >>> kind_of_type("Erratum"), kind_of_type("partial_retraction"), kind_of_type("article")
    ('erratum', 'retraction', None)
    """
    if not doc_type:
        return None
    return SOURCE_TYPES.get(re.sub(r"[\s_]+", "-", doc_type.strip().lower()))


def kind_of_title(title: str | None) -> str | None:
    """The non-paper kind a title names (None: a paper's title, or none).

    >>> [kind_of_title(t) for t in ["Errata", "Erratum to: Deep nets", "Adendo",
    ...  "Correção: Vacinação infantil", "Fe de erratas", "Berichtigung", "Éditorial",
    ...  "Sumário", "Table of contents"]]
    ['erratum', 'erratum', 'erratum', 'erratum', 'erratum', 'erratum', 'editorial', \
'paratext', 'paratext']
    >>> kind_of_title("Correction of OCR errors in historical newspapers") is None
    True
    >>> kind_of_title("Editorial policies of open-access journals") is None
    True
    """
    if not title:
        return None
    folded = _folded(title)
    if not _ANY_TITLE.match(folded):  # most titles: one match, not one per kind
        return None
    for kind, pattern in _TITLE_PATTERNS:
        if pattern.match(folded):
            return kind
    return None


def kind_of_heading(headings: Sequence[str] | None) -> str | None:
    """The non-paper kind a section heading (JATS ``subject``) names, when the whole heading is
    one of the words of :func:`kind_of_title` (None otherwise).

    >>> kind_of_heading(["Errata"]), kind_of_heading(["RESENHAS", "Peer-Review"])
    ('erratum', 'book-review')
    >>> kind_of_heading(["Original Article"]) is None
    True
    """
    for heading in headings or ():
        kind = _HEADINGS.get(_folded(heading)) if heading else None
        if kind is not None:
            return kind
    return None


def _shown(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def classify(doc_type: str | None, title: str | None, headings: Sequence[str] | None,
             has_content: bool, has_references: bool) -> tuple[str, str | None]:
    """``(kind, reason)`` of a record: from its source's ``doc_type``, its ``title``, its
    ``headings``, and whether it has an abstract or full text (``has_content``) or a reference
    (``has_references``); the reason is None for a paper.

    >>> classify("correction", "Errata", [], True, False)
    ('erratum', "type 'correction'")
    >>> classify("article", "Erratum", [], False, False)
    ('erratum', "title 'Erratum'")
    >>> classify(None, "A history of Brazil", [], False, False)
    ('stub', 'no abstract, full text or reference')
    >>> classify("research-article", "Orchids of Brazil", ["Artigo"], True, True)
    ('paper', None)
    """
    kind = kind_of_type(doc_type)
    if kind is not None:
        return kind, f"type {doc_type!r}"
    kind = kind_of_title(title)
    if kind is not None:
        return kind, f"title {_shown(title or '')!r}"
    kind = kind_of_heading(headings)
    if kind is not None:
        heading = next(h for h in headings or () if kind_of_heading([h]) == kind)
        return kind, f"section {_shown(heading)!r}"
    if not has_content and not has_references:
        return "stub", "no abstract, full text or reference"
    return "paper", None


def record_kinds(table: pa.Table | pa.RecordBatch) -> tuple[pa.Array, pa.Array]:
    """The ``kind`` and ``kind_reason`` of each row of a table of papers (columns
    ``doc_type`` (may be absent), ``title``, ``categories``, ``abstract``, ``translations``,
    ``full_text`` and ``has_references``)."""
    names = table.schema.names
    n = table.num_rows
    doc_types = table["doc_type"].to_pylist() if "doc_type" in names else [None] * n
    translations = table["translations"].to_pylist()
    kinds, reasons = [], []
    for doc_type, title, headings, abstract, translated, full_text, referenced in zip(
            doc_types, table["title"].to_pylist(), table["categories"].to_pylist(),
            table["abstract"].to_pylist(), translations, table["full_text"].to_pylist(),
            table["has_references"].to_pylist(), strict=True):
        content = bool(abstract) or bool(full_text) or any(
            t.get("abstract") for t in translated or ())
        kind, reason = classify(doc_type, title, headings, content, bool(referenced))
        kinds.append(kind)
        reasons.append(reason)
    return pa.array(kinds, pa.string()), pa.array(reasons, pa.string())
