"""The JATS reader: real SciELO articles, a hand-written article, broken input and sniffing."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from openmsd.ingest import jats
from openmsd.report import Report


def records(path: Path, report: Report) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {"paper": [], "reference": [], "context": []}
    for kind, record in jats.read(path, report):
        out[kind].append(record)
    return out


# --- (a) the 51 real SciELO files -------------------------------------------------------------

@pytest.fixture
def scielo(shared_data: Path) -> Path:
    return shared_data / "scielo-jats"


def test_all_real_files(scielo: Path, report: Report) -> None:
    papers, references, contexts = [], [], []
    for path in sorted(scielo.glob("*.xml")):
        found = records(path, report)
        papers += found["paper"]
        references += found["reference"]
        contexts += found["context"]
    assert report.problems == []
    assert (len(papers), len(references), len(contexts)) == (51, 1455, 2384)
    assert all(p["doi"] and p["key"] == p["doi"] and p["source"] == "jats" for p in papers)
    assert Counter(p["declared_language"] for p in papers) == {"pt": 27, "en": 22, "es": 2}
    # translated abstracts: 35 papers, 42 abstracts, in the three SciELO languages
    translated = [t["language"] for p in papers for t in p["translations"] if t["abstract"]]
    assert Counter(translated) == {"en": 23, "pt": 12, "es": 7}
    assert sum(1 for p in papers if any(t["abstract"] for t in p["translations"])) == 35
    assert report.counts["jats.papers_with_translations"] == 39
    assert report.counts["jats.translation_sub_articles"] == 23
    assert report.counts["jats.sub_articles_ignored.reviewer-report"] == 16
    assert report.counts["jats.sub_articles_ignored.reply"] == 1
    # references with a DOI, by where it was found
    assert sum(1 for r in references if any(t.startswith("doi:") for t in r["targets"])) == 511
    assert report.counts["jats.references_doi_from_pub-id"] == 224
    assert report.counts["jats.references_doi_from_ext-link"] == 273
    assert report.counts["jats.references_doi_from_text"] == 14
    # every context cites a reference of its own paper
    ref_ids = {(r["citing"], r["ref_id"]) for r in references}
    assert all((c["citing"], c["ref_id"]) in ref_ids for c in contexts)


def test_real_english_article(scielo: Path, report: Report) -> None:
    found = records(scielo / "0006-8705-brag-81-e2022.xml", report)
    (paper,) = found["paper"]
    assert paper["key"] == "10.1590/1678-4499.20210245"
    assert paper["aliases"] == ["doi:10.1590/1678-4499.20210245"]
    assert paper["title"].startswith("Rootstock and potassium fertilization, in terms of phenology")
    assert paper["venue"] == "Bragantia"
    assert paper["year"] == 2022
    assert paper["declared_language"] == "en"
    assert paper["authors"][0] == "Daniel Callili"
    assert "Francisco José Domingues Neto" in paper["authors"]  # <suffix>
    assert paper["keywords"] == ["table grapes", "grafting", "chemical characteristics",
                                 "degrees-day", "potassium fertilization"]
    assert paper["categories"] == ["Article"]
    assert paper["translations"] == []
    assert paper["abstract"].startswith("This study aimed to assess the effect of rootstocks")
    assert paper["full_text"].startswith("INTRODUCTION\n\nNiagara Rosada is one of the most")
    refs = found["reference"]
    assert len(refs) == 40
    assert sum(1 for r in refs if r["targets"]) == 32
    first = refs[0]
    assert first["ref_id"] == "B01" and first["position"] == 0
    assert first["title"] == ("Cellular and tissue distribution of potassium: physiological "
                              "relevance, mechanisms and regulation")
    assert first["authors"] == ["I. Ahmad", "F. J. M. Maathuis"]
    assert (first["year"], first["venue"]) == (2014, "Journal of Plant Physiology")
    assert first["targets"] == ["doi:10.1016/j.jplph.2013.10.016"]
    assert first["raw"].startswith("Ahmad, I. and Maathuis, F. J. M. (2014).")
    contexts = found["context"]
    assert len(contexts) == 59
    assert contexts[0]["ref_id"] == "B30"
    assert contexts[0]["text"] in paper["full_text"].split("\n\n")
    start = contexts[0]["position"]
    assert contexts[0]["text"][start:].startswith("Tecchio et al. 2018)")


def test_real_translations(scielo: Path, report: Report) -> None:
    # Portuguese article: Spanish trans-abstract plus an English translation sub-article
    (paper,) = records(scielo / "96fDfzSqzxPF9cPxxPNYFmk.xml", report)["paper"]
    assert paper["declared_language"] == "pt"
    assert paper["aliases"] == ["doi:10.1590/2177-9465-ean-2021-0088",
                                "scielo:96fDfzSqzxPF9cPxxPNYFmk",
                                "scielo:S1414-81452022000100201"]
    assert paper["year"] == 2021  # online 2021, issue 2022
    assert paper["abstract"].startswith("Objetivo: compreender, por meio do brinquedo")
    assert paper["keywords"][0] == "Enfermagem Pediátrica"
    en, es = paper["translations"]
    assert en["language"] == "en"
    assert en["title"].startswith("Visiting a hospitalized child in intensive care")
    assert en["abstract"].startswith("Objective: to understand, by means of dramatic")
    assert en["keywords"][0] == "Pediatric Nursing"
    assert es["language"] == "es"
    assert es["title"].startswith("Visita al niño hospitalizado en terapia intensiva")
    assert es["keywords"][0] == "Enfermería Pediátrica"
    # Spanish article re-published in 2025, issue of 2019; pt title without a pt abstract
    (paper,) = records(scielo / "S2176-66652019000100074.xml", report)["paper"]
    assert paper["year"] == 2019
    assert [(t["language"], bool(t["abstract"])) for t in paper["translations"]] == [
        ("en", True), ("pt", False)]
    assert paper["translations"][1]["title"].startswith("Vozes que Gritam Forte")


def test_real_secondary_abstracts_and_sub_articles(scielo: Path, report: Report) -> None:
    (paper,) = records(scielo / "summary.xml", report)["paper"]
    assert paper["abstract"].startswith("Objective: To develop and validate predictive models")
    assert "In Brief" not in paper["abstract"] and "▪" not in paper["abstract"]
    assert report.counts["jats.abstracts_secondary_skipped"] == 3
    found = records(scielo / "2176-4573-bak-p58270.xml", report)
    assert report.counts["jats.sub_articles_ignored.reviewer-report"] == 5
    assert len(found["reference"]) == 15 and len(found["context"]) == 29
    assert found["paper"][0]["translations"][0]["language"] == "en"


# --- (b) a hand-written article following the JATS 1.1 tag library ----------------------------

ARTICLE = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Publishing DTD v1.1 20151215//EN"
 "https://jats.nlm.nih.gov/publishing/1.1/JATS-journalpublishing1.dtd">
<article xmlns:xlink="http://www.w3.org/1999/xlink" article-type="research-article"
 dtd-version="1.1" xml:lang="pt">
  <front>
    <journal-meta>
      <journal-title-group><journal-title>Revista de Teste</journal-title></journal-title-group>
    </journal-meta>
    <article-meta>
      <article-id pub-id-type="publisher-id">AbCdEfGhIjKlMnOpQrStUvW</article-id>
      <article-id pub-id-type="publisher-id">S0104-59702020000100275</article-id>
      <article-id pub-id-type="other">00217</article-id>
      <article-id pub-id-type="pmid">31234567</article-id>
      <article-id pub-id-type="pmcid">PMC7654321</article-id>
      <article-id pub-id-type="doi">10.1590/TEST.2020.01</article-id>
      <article-categories>
        <subj-group subj-group-type="heading"><subject>Artigo</subject>
          <subj-group><subject>Linguística</subject></subj-group></subj-group>
      </article-categories>
      <title-group>
        <article-title>Um título
          <italic>com</italic> marcação<xref ref-type="fn" rid="fn1">*</xref></article-title>
        <trans-title-group xml:lang="en"><trans-title>A title</trans-title></trans-title-group>
      </title-group>
      <contrib-group>
        <contrib contrib-type="author"><name><surname>Silva</surname>
          <given-names>Ana Maria</given-names><suffix>Neto</suffix></name></contrib>
        <contrib contrib-type="author"><collab>Grupo de Estudos</collab></contrib>
        <contrib contrib-type="editor"><name><surname>Outro</surname>
          <given-names>Editor</given-names></name></contrib>
      </contrib-group>
      <pub-date date-type="pub" publication-format="electronic"><day>3</day><month>2</month>
        <year>2020</year></pub-date>
      <pub-date date-type="collection" publication-format="electronic"><year>2021</year></pub-date>
      <abstract abstract-type="graphical"><title>Resumo gráfico</title><p>figura</p></abstract>
      <abstract>
        <title>Resumo</title>
        <sec><title>Objetivo</title><p>Estudar   algo.</p></sec>
        <sec><title>Método:</title><p>Um método<xref ref-type="bibr" rid="B1">1</xref>.</p></sec>
      </abstract>
      <trans-abstract xml:lang="en"><title>Abstract</title><p>We study
        something.</p></trans-abstract>
      <kwd-group xml:lang="pt"><title>Palavras-chave:</title><kwd>teste</kwd>
        <kwd>leitor</kwd></kwd-group>
      <kwd-group xml:lang="en"><title>Keywords:</title><kwd>test</kwd></kwd-group>
    </article-meta>
  </front>
  <body>
    <sec>
      <title>Introdução</title>
      <p>Segundo Silva (<xref ref-type="bibr" rid="B1">2010</xref>), o caso é
        claro<xref ref-type="bibr" rid="B2 B3"><sup>2,3</sup></xref>.</p>
      <p>Uma lista:<list><list-item><p>item com nota<xref ref-type="bibr"
        rid="B4">4</xref></p></list-item></list></p>
      <table-wrap><table><tr><td>célula<xref ref-type="bibr" rid="B9">9</xref></td></tr>
      </table></table-wrap>
    </sec>
  </body>
  <back>
    <ref-list>
      <title>Referências</title>
      <ref id="B1">
        <mixed-citation>SILVA, A. 2010. Um artigo. <italic>Revista</italic>, 3: 1-9.
          https://doi.org/10.1000/XYZ.1</mixed-citation>
        <element-citation publication-type="journal">
          <person-group person-group-type="author">
            <name><surname>Silva</surname><given-names>A.</given-names></name>
          </person-group>
          <article-title>Um artigo</article-title><source>Revista</source>
          <year>2010</year>
          <pub-id pub-id-type="doi">10.1000/XYZ.1.</pub-id>
          <pub-id pub-id-type="pmid">123</pub-id>
        </element-citation>
      </ref>
      <ref id="B2">
        <mixed-citation>Souza B, Lima C. Livro. São Paulo: Editora; 2001.</mixed-citation>
        <element-citation publication-type="book">
          <person-group person-group-type="author">
            <name><surname>Souza</surname><given-names>B</given-names></name>
            <name><surname>Lima</surname><given-names>C</given-names></name>
          </person-group>
          <person-group person-group-type="translator">
            <name><surname>Tradutor</surname><given-names>T</given-names></name>
          </person-group>
          <source>Livro</source><year>2001a</year>
        </element-citation>
      </ref>
      <ref id="B3">
        <mixed-citation>Costa D. Capítulo. Em: Obra. <ext-link ext-link-type="uri"
          xlink:href="https://doi.org/10.2000/abc">link</ext-link></mixed-citation>
        <element-citation publication-type="book">
          <person-group person-group-type="author"><collab>Consórcio X</collab></person-group>
          <chapter-title>Capítulo</chapter-title><source>Obra</source>
          <ext-link ext-link-type="uri" xlink:href="https://doi.org/10.2000/abc">link</ext-link>
        </element-citation>
      </ref>
      <ref id="B4"><mixed-citation>Texto livre, doi: 10.3000/def.</mixed-citation></ref>
      <ref><mixed-citation>Sem id.</mixed-citation></ref>
      <ref id="B9"><mixed-citation>Nove.</mixed-citation></ref>
    </ref-list>
  </back>
  <sub-article article-type="translation" id="s1" xml:lang="es">
    <front-stub>
      <title-group><article-title>Un título</article-title></title-group>
      <abstract><title>Resumen</title><p>Estudiamos algo.</p></abstract>
      <kwd-group xml:lang="es"><kwd>prueba</kwd></kwd-group>
    </front-stub>
    <body><p>Texto traducido<xref ref-type="bibr" rid="B1">1</xref>.</p></body>
  </sub-article>
  <sub-article article-type="reviewer-report" id="r1" xml:lang="pt">
    <front-stub><title-group><article-title>Parecer</article-title></title-group></front-stub>
    <body><p>Parecer do revisor.</p></body>
  </sub-article>
</article>
"""


def line_of(fragment: str) -> int:
    """The 1-based line of ARTICLE holding a fragment."""
    return next(n for n, line in enumerate(ARTICLE.splitlines(), 1) if fragment in line)


def _write(path: Path, text: str, gz: bool = False) -> Path:
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.mark.parametrize("gz", [False, True])
def test_hand_written_article(tmp_path: Path, report: Report, gz: bool) -> None:
    path = _write(tmp_path / ("a.xml.gz" if gz else "a.xml"), ARTICLE, gz)
    assert jats.sniff(path.read_bytes() if not gz else gzip.decompress(path.read_bytes()), path)
    found = records(path, report)
    (paper,) = found["paper"]
    key = "10.1590/test.2020.01"
    assert paper == {
        "key": key,
        "aliases": ["doi:10.1590/test.2020.01", "pmcid:PMC7654321", "pmid:31234567",
                    "scielo:AbCdEfGhIjKlMnOpQrStUvW", "scielo:S0104-59702020000100275"],
        "doi": key,
        "title": "Um título com marcação",
        "abstract": "Objetivo: Estudar algo. Método: Um método.",
        "declared_language": "pt",
        "year": 2020,
        "venue": "Revista de Teste",
        "authors": ["Ana Maria Silva Neto", "Grupo de Estudos"],
        "keywords": ["teste", "leitor"],
        "categories": ["Artigo", "Linguística"],
        "translations": [
            {"language": "en", "title": "A title", "abstract": "We study something.",
             "keywords": ["test"]},
            {"language": "es", "title": "Un título", "abstract": "Estudiamos algo.",
             "keywords": ["prueba"]},
        ],
        "full_text": "Introdução\n\nSegundo Silva (2010), o caso é claro2,3.\n\n"
                     "Uma lista: item com nota4",
        "doc_type": "research-article",
        "source": "jats",
        "loc": f"{path.name}:5",  # libxml2 numbers an element by the end of its start tag
    }
    refs = found["reference"]
    assert [r["position"] for r in refs] == [0, 1, 2, 3, 4, 5]
    assert [r["ref_id"] for r in refs] == ["B1", "B2", "B3", "B4", None, "B9"]
    assert all(r["citing"] == key and r["source"] == "jats" for r in refs)
    b1, b2, b3, b4, _, _ = refs
    assert b1["targets"] == ["doi:10.1000/xyz.1", "pmid:123"]  # trailing '.' cut
    assert (b1["title"], b1["authors"], b1["year"], b1["venue"]) == (
        "Um artigo", ["A. Silva"], 2010, "Revista")
    assert b1["raw"] == ("SILVA, A. 2010. Um artigo. Revista, 3: 1-9. "
                         "https://doi.org/10.1000/XYZ.1")
    assert b1["loc"].startswith(f"{path.name}:")
    # a book: the source is the title, no venue; translators are not authors
    assert (b2["title"], b2["venue"], b2["authors"], b2["year"], b2["targets"]) == (
        "Livro", None, ["B Souza", "C Lima"], 2001, [])
    # a chapter with a doi.org link and a collab author
    assert (b3["title"], b3["venue"], b3["authors"], b3["targets"]) == (
        "Capítulo", "Obra", ["Consórcio X"], ["doi:10.2000/abc"])
    # only a mixed-citation: the DOI is taken from its text
    assert (b4["title"], b4["raw"], b4["targets"]) == (None, "Texto livre, doi: 10.3000/def.",
                                                       ["doi:10.3000/def"])
    assert report.counts["jats.references_doi_from_text"] == 1
    assert report.counts["jats.references_without_id"] == 1
    contexts = found["context"]
    assert [c["ref_id"] for c in contexts] == ["B1", "B2", "B3", "B4", "B9"]
    first, second, third, fourth, fifth = contexts
    assert first["text"] == "Segundo Silva (2010), o caso é claro2,3."
    assert first["position"] == len("Segundo Silva (")
    assert second["position"] == third["position"] == len("Segundo Silva (2010), o caso é claro")
    assert second["text"] == third["text"] == first["text"]
    assert fourth["text"] == "Uma lista: item com nota4"  # the outermost paragraph
    assert fourth["position"] == len("Uma lista: item com nota")
    assert (fifth["text"], fifth["position"]) == ("célula9", 6)  # a marker in a table cell
    assert report.counts["jats.contexts_outside_paragraph"] == 1
    assert report.counts["jats.sub_articles_ignored.reviewer-report"] == 1
    assert report.counts["jats.abstracts_secondary_skipped"] == 1
    assert report.problems == []


def test_key_without_doi_and_entities(tmp_path: Path, report: Report) -> None:
    text = ARTICLE.replace('<article-id pub-id-type="doi">10.1590/TEST.2020.01</article-id>', "")
    text = text.replace("Estudar   algo.", "Estudar&nbsp;algo &amp; mais.")
    (paper,) = records(_write(tmp_path / "b.xml", text), report)["paper"]
    assert paper["key"] == "scielo:AbCdEfGhIjKlMnOpQrStUvW"
    assert paper["doi"] is None
    assert paper["abstract"].startswith("Objetivo: Estudar algo & mais.")
    text = text.replace("AbCdEfGhIjKlMnOpQrStUvW", "pub.123").replace(
        "S0104-59702020000100275", "pub.456")
    found = records(_write(tmp_path / "c.xml", text), report)
    assert found["paper"][0]["key"] == "jats:pub.123"
    assert {"jats:pub.123", "jats:pub.456"} <= set(found["paper"][0]["aliases"])
    assert {r["citing"] for r in found["reference"] + found["context"]} == {"jats:pub.123"}


def test_entities_of_the_internal_dtd_subset(tmp_path: Path, report: Report) -> None:
    """Declared in the document: read as declared, one level (a nested one stays literal, so
    nothing amplifies); an external one is never read."""
    subset = ('"https://jats.nlm.nih.gov/publishing/1.1/JATS-journalpublishing1.dtd" [\n'
              '  <!ENTITY journal "Revista &#x201C;Teste&#x201D;">\n'
              '  <!ENTITY twice "&journal;&journal;">\n'
              '  <!ENTITY secret SYSTEM "file:///etc/hostname">\n]>')
    text = ARTICLE.replace('"https://jats.nlm.nih.gov/publishing/1.1/JATS-journalpublishing1.dtd">',
                           subset, 1)
    text = text.replace("Estudar   algo.", "Estudar &journal; e &twice; &secret; algo.")
    (paper,) = records(_write(tmp_path / "e.xml", text), report)["paper"]
    assert "Estudar Revista \u201cTeste\u201d e &journal;&journal; &secret; algo." in \
        paper["abstract"]


# --- (c) bad input -----------------------------------------------------------------------------

def test_bad_files_are_reported_and_the_next_file_is_read(tmp_path: Path, report: Report) -> None:
    broken = _write(tmp_path / "broken.xml", ARTICLE.replace("<p>Uma lista:", "<p>Uma & lista:"))
    bad_bytes = tmp_path / "latin1.xml"
    bad_bytes.write_bytes(ARTICLE.replace("Um título", "Um t\udcedtulo").encode(
        "utf-8", "surrogateescape"))
    not_article = _write(tmp_path / "other.xml", "<collection><document/></collection>")
    no_meta = _write(tmp_path / "nometa.xml", "<article><body><p>x</p></body></article>")
    no_ids = _write(tmp_path / "noid.xml", ARTICLE.replace('pub-id-type="doi"', 'pub-id-type="x"')
                    .replace('"publisher-id"', '"other"'))
    truncated_gz = tmp_path / "cut.xml.gz"
    truncated_gz.write_bytes(gzip.compress(ARTICLE.encode())[:200])
    good = _write(tmp_path / "good.xml", ARTICLE)
    seen = []
    for path in (broken, bad_bytes, not_article, no_meta, no_ids, truncated_gz, good):
        seen += [(path.name, kind) for kind, _ in jats.read(path, report)]
    assert Counter(seen) == {("good.xml", "paper"): 1, ("good.xml", "reference"): 6,
                             ("good.xml", "context"): 5}
    problems = {p.file.rsplit("/", 1)[-1]: p for p in report.problems}
    assert problems["broken.xml"].where == f"line {line_of('<p>Uma lista:')}"
    assert problems["broken.xml"].reason.startswith("malformed XML: ")
    assert problems["latin1.xml"].where == f"line {line_of('Um título')}"
    assert "encoding" in problems["latin1.xml"].reason
    assert problems["other.xml"].reason.startswith("not a JATS article: root element is")
    assert problems["nometa.xml"].reason == "missing required element: front/article-meta"
    assert problems["noid.xml"].reason.startswith("missing required field: article-id")
    assert problems["cut.xml.gz"].kind == "skipped"
    assert all(p.kind == "skipped" for p in report.problems)
    assert report.by_reason()["malformed XML"] >= 2


def test_unknown_rid_is_a_warning(tmp_path: Path, report: Report) -> None:
    text = ARTICLE.replace('rid="B2 B3"', 'rid="B2 B77"')
    found = records(_write(tmp_path / "d.xml", text), report)
    assert [c["ref_id"] for c in found["context"]] == ["B1", "B2", "B77", "B4", "B9"]
    (problem,) = report.problems
    assert problem.kind == "warning"
    assert problem.where == f"line {line_of('claro<xref')}"
    assert problem.reason.startswith("unknown reference id: rid 'B77'")


# --- (d) sniffing ------------------------------------------------------------------------------

def test_sniff(scielo: Path, tmp_path: Path) -> None:
    for path in sorted(scielo.glob("*.xml")):
        assert jats.sniff(path.read_bytes()[:8192], path), path.name
    no_doctype = b'<article xmlns:xlink="http://www.w3.org/1999/xlink" xml:lang="en">\n<front>'
    assert jats.sniff(no_doctype, tmp_path / "x.xml")
    assert jats.sniff(b"\xef\xbb\xbf<?xml version='1.0'?>\n<!-- c -->\n" + no_doctype, tmp_path)
    parscit = (b'<?xml version="1.0" encoding="UTF-8"?>\n<algorithms version="110505">\n'
               b'<algorithm name="ParsCit" version="110505">\n<citationList>\n')
    bioc = b'<?xml version="1.0"?><collection><source>x</source><document><id>1</id>'
    generic = b'{"id": "p1", "title": "An article", "abstract": "<article> <front>"}\n'
    html = b"<html><body><article><p>blog post</p></article></body></html>"
    for head in (parscit, bioc, generic, html):
        assert not jats.sniff(head, tmp_path / "x")
