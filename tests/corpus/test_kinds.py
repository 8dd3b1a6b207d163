"""Records that are not papers: their kind from the source's type, the title (per language),
the section heading and the content; marked at ingest, and computed on open for a corpus built
before kinds were recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from openmsd.cli import SAMPLE
from openmsd.corpus import (
    KINDS,
    NON_PAPERS,
    Corpus,
    classify,
    kind_of_heading,
    kind_of_title,
    kind_of_type,
    non_papers,
)
from openmsd.ingest import ingest


@pytest.mark.parametrize(("title", "kind"), [
    # English
    ("Erratum", "erratum"), ("Erratum to: Deep residual learning", "erratum"),
    ("Correction: Effects of pH on enzyme activity", "erratum"),
    ("Correction to “A survey of dependency parsing”", "erratum"),
    ("Corrigendum", "erratum"), ("Addendum to the 2019 guidelines", "erratum"),
    ("Retraction notice", "retraction"), ("Retracted: Graphene oxide sensors", "retraction"),
    ("Expression of concern: Vitamin D trial", "retraction"),
    ("Editorial", "editorial"), ("Editorial: Special issue on parsing", "editorial"),
    ("Editor's note", "editorial"), ("Table of contents", "paratext"),
    ("Issue Information", "paratext"), ("Instructions for authors", "paratext"),
    ("Book review: The Cambridge Introduction to Bakhtin", "book-review"),
    # Portuguese
    ("Errata", "erratum"), ("ERRATA", "erratum"), ("[Errata]", "erratum"),
    ("Adendo", "erratum"), ("Correção", "erratum"), ("Correção: Vacinação infantil", "erratum"),
    ("Nota do editor", "editorial"), ("Apresentação", "editorial"), ("Sumário", "paratext"),
    ("Índice", "paratext"), ("Resenha: Os sertões", "book-review"),
    ("Artigo retratado: Efeito da dengue", "retraction"),
    # Spanish
    ("Fe de erratas", "erratum"), ("Fe de errata del artículo", "erratum"),
    ("Corrección", "erratum"), ("Nota del editor", "editorial"), ("Presentación", "editorial"),
    ("Reseña: Cien años de soledad", "book-review"),
    # French
    ("Rectificatif", "erratum"), ("Éditorial", "editorial"),
    ("Table des matières", "paratext"), ("Sommaire", "paratext"),
    ("Compte rendu : La langue et le discours", "book-review"),
    # German
    ("Berichtigung", "erratum"), ("Berichtigung zu: Syntaxanalyse", "erratum"),
    ("Inhaltsverzeichnis", "paratext"), ("Rezension: Sprache und Denken", "book-review"),
])
def test_titles_that_are_not_papers(title, kind):
    assert kind_of_title(title) == kind


@pytest.mark.parametrize("title", [
    "Correction of OCR errors in historical newspapers",
    "Correction for multiple testing in genome-wide studies",
    "Corrección automática de errores ortográficos en español",
    "Correção gramatical automática para o português",
    "Editorial policies of open-access journals",
    "Editorials as a genre: a corpus study",
    "Index coding with side information",
    "Índice de massa corporal em idosos",
    "Contents-based image retrieval",
    "Erratic behaviour of sea ice in the Arctic",
    "A note on errata in medieval manuscripts",
    "Presentation attacks on face recognition",
    "Retraction of the gums in older adults",
    "Resenhas críticas como gênero acadêmico",
    "",
    None,
])
def test_titles_of_papers_are_papers(title):
    assert kind_of_title(title) is None


@pytest.mark.parametrize(("doc_type", "kind"), [
    # OpenAlex work types
    ("erratum", "erratum"), ("paratext", "paratext"), ("editorial", "editorial"),
    ("retraction", "retraction"), ("peer-review", "paratext"), ("article", None),
    ("letter", None), ("review", None), ("preprint", None),
    # JATS article-type
    ("correction", "erratum"), ("addendum", "erratum"), ("book-review", "book-review"),
    ("partial-retraction", "retraction"), ("expression-of-concern", "retraction"),
    ("research-article", None), ("article-commentary", None), ("reviewer-report", "paratext"),
    # Crossref update types, as written
    ("partial_retraction", "retraction"), ("Correction", "erratum"), ("journal-article", None),
    (None, None),
])
def test_source_types(doc_type, kind):
    assert kind_of_type(doc_type) == kind


def test_kind_order_and_reasons():
    assert classify("erratum", "A study of things", [], True, True) == (
        "erratum", "type 'erratum'")
    assert classify("article", "Errata", [], True, False) == ("erratum", "title 'Errata'")
    assert classify(None, "Um título qualquer", ["Errata"], True, False) == (
        "erratum", "section 'Errata'")
    assert kind_of_heading(["ARTIGOS", "Original Article"]) is None
    assert classify(None, "A bare title", [], False, False) == (
        "stub", "no abstract, full text or reference")
    assert classify(None, "A bare title", [], False, True) == ("paper", None)  # references
    assert classify(None, "A bare title", [], True, False) == ("paper", None)  # an abstract
    assert set(NON_PAPERS) == set(KINDS) - {"paper"}


WORK = "https://openalex.org/W{}"


def _work(number: int, title: str, kind: str, abstract: bool = True, **extra) -> dict:
    return {"id": WORK.format(number), "title": title, "type": kind, "publication_year": 2020,
            "abstract_inverted_index": {"We": [0], "study": [1], "dengue": [2]}
            if abstract else None,
            "referenced_works": [WORK.format(number + 1000)], **extra}


@pytest.fixture(scope="module")
def marked(tmp_path_factory) -> Corpus:
    """OpenAlex works, Crossref items, generic JSONL and the sample's JATS articles, ingested
    into one corpus."""
    root = tmp_path_factory.mktemp("kinds")
    works = [_work(1, "Dengue vector control in Brazil", "article"),
             _work(2, "Erratum: Dengue vector control", "erratum"),
             _work(3, "Front cover", "article", is_paratext=True),
             _work(4, "Errata", "article"),
             _work(5, "Editorial: dengue", "editorial"),
             _work(6, "Correction of OCR errors in historical newspapers", "article"),
             {"id": WORK.format(7), "title": "A history of Brazil", "type": "book",
              "publication_year": 1990}]
    (root / "works.jsonl").write_text("\n".join(json.dumps(w) for w in works) + "\n")
    items = {"items": [
        {"DOI": "10.1234/notice", "type": "journal-article", "title": ["Dengue in Recife"],
         "abstract": "<jats:p>A correction.</jats:p>", "reference-count": 0,
         "container-title": ["J"], "issued": {"date-parts": [[2021]]},
         "update-to": [{"DOI": "10.1234/original", "type": "correction",
                        "updated": {"date-parts": [[2021, 1, 1]]}}]},
        {"DOI": "10.1234/original", "type": "journal-article", "title": ["Dengue in Recife"],
         "abstract": "<jats:p>We count cases.</jats:p>", "reference-count": 0,
         "container-title": ["J"], "issued": {"date-parts": [[2020]]}}]}
    (root / "crossref.json").write_text(json.dumps(items))
    lines = [{"id": "j1", "title": "Une grammaire du français", "abstract": "Nous...",
              "type": "editorial"},
             {"id": "j2", "title": "Analyse syntaxique", "abstract": "Nous..."}]
    (root / "generic.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    out = root / "corpus"
    ingest([root / "works.jsonl", root / "crossref.json", root / "generic.jsonl",
            SAMPLE / "scielo-jats"], out)
    return Corpus(out)


def _kinds(corpus: Corpus) -> dict[str, tuple[str, str | None]]:
    table = corpus.read("papers", ["paper_id", "kind", "kind_reason"])
    return {p: (k, r) for p, k, r in zip(*(table[c].to_pylist() for c in table.column_names),
                                         strict=True)}


def test_readers_mark_records_by_type_title_and_content(marked):
    kinds = _kinds(marked)
    assert kinds["openalex:W1"] == ("paper", None)
    assert kinds["openalex:W2"] == ("erratum", "type 'erratum'")
    assert kinds["openalex:W3"] == ("paratext", "type 'paratext'")  # is_paratext
    assert kinds["openalex:W4"] == ("erratum", "title 'Errata'")
    assert kinds["openalex:W5"] == ("editorial", "type 'editorial'")
    assert kinds["openalex:W6"] == ("paper", None)
    assert kinds["openalex:W7"] == ("stub", "no abstract, full text or reference")
    assert kinds["10.1234/notice"] == ("erratum", "type 'correction'")  # Crossref update-to
    assert kinds["10.1234/original"][0] == "paper"
    assert kinds["j1"] == ("editorial", "type 'editorial'") and kinds["j2"][0] == "paper"
    # JATS article-type
    assert kinds["10.1590/1980-54702020v26e0188"] == ("erratum", "type 'correction'")
    assert kinds["10.1590/1678-460x202257175video"] == ("erratum", "type 'addendum'")
    assert kinds["10.1590/2176-4573p59384"] == ("book-review", "type 'book-review'")
    assert kinds["10.1590/0101-3173.2022.v45n1.p139"] == ("paper", None)
    assert marked.read("papers", ["doc_type"])["doc_type"].to_pylist().count("erratum") == 1
    assert non_papers(marked) == {p: k for p, (k, _) in kinds.items() if k != "paper"}


def _strip_kinds(corpus: Corpus) -> None:
    """``papers.parquet`` as a build before kinds were recorded wrote it (same build id)."""
    path = corpus.table_path("papers")
    table = pq.read_table(path)
    old = table.drop_columns(["doc_type", "kind", "kind_reason"])
    pq.write_table(old.replace_schema_metadata(table.schema.metadata), path)


def test_a_corpus_built_before_kinds_gets_them_on_open(marked, tmp_path):
    import shutil

    copy = Corpus(shutil.copytree(marked.root, tmp_path / "old"))
    _strip_kinds(copy)
    assert "kind" not in pq.read_schema(copy.table_path("papers")).names
    copy.check()
    found = non_papers(copy)
    # the titles, headings and content still say it; the source's type was not kept
    assert found["openalex:W4"] == "erratum" and found["openalex:W7"] == "stub"
    assert found["10.1590/1980-54702020v26e0188"] == "erratum"  # title "Errata"
    assert found["10.1590/1678-460x202257175video"] == "erratum"  # title "Adendo"
    assert found["openalex:W2"] == "erratum"  # its title says it too
    assert "openalex:W1" not in found and "openalex:W6" not in found
    assert "openalex:W5" in found  # "Editorial: dengue"


def test_staged_parts_of_an_older_ingest_are_read_by_name(marked, tmp_path):
    """A staged part written before ``doc_type`` existed still builds, its types null."""
    import shutil

    copy = Path(shutil.copytree(marked.root, tmp_path / "again"))
    parts = sorted(copy.rglob("staged_papers*.parquet"))
    assert parts
    for part in parts:
        table = pq.read_table(part)
        pq.write_table(table.drop_columns(["doc_type"]).replace_schema_metadata(
            table.schema.metadata), part)
    extra = tmp_path / "extra.jsonl"
    extra.write_text(json.dumps({"id": "x1", "title": "Fe de erratas", "abstract": "..."})
                     + "\n")
    ingest([extra], copy)
    kinds = _kinds(Corpus(copy))
    assert kinds["x1"] == ("erratum", "title 'Fe de erratas'")
    assert kinds["openalex:W4"] == ("erratum", "title 'Errata'")
    assert kinds["openalex:W2"] == ("erratum", "title 'Erratum: Dengue vector control'")
