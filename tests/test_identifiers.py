from hypothesis import given
from hypothesis import strategies as st

from openmsd.identifiers import (
    alias,
    aliases,
    dois_in_text,
    key_aliases,
    normalize_doi,
    normalize_title,
    paper_key,
)


def test_normalize_doi_strips_resolvers_and_case():
    assert normalize_doi("https://doi.org/10.1590/S0104-5970") == "10.1590/s0104-5970"
    assert normalize_doi("doi: 10.1000/ABC") == "10.1000/abc"
    assert normalize_doi("http://dx.doi.org/10.1016/j.socio.2020.1") == "10.1016/j.socio.2020.1"
    assert normalize_doi("not a doi") is None
    assert normalize_doi("") is None


def test_paper_key_prefers_doi_then_namespace():
    assert paper_key("10.1234/X", "openalex", "W1") == "10.1234/x"
    assert paper_key(None, "openalex", "https://openalex.org/W1") == "openalex:W1"
    assert paper_key(None, None, "taln-2002-poster-006") == "taln-2002-poster-006"
    assert paper_key(None, "s2", "  ") is None


def test_aliases_cover_every_identifier():
    ids = {"openalex": "https://openalex.org/w9", "arxiv": "arXiv:2101.1"}
    assert aliases("10.1234/x", ids) == ["arxiv:2101.1", "doi:10.1234/x", "openalex:W9"]
    assert alias("doi", "garbage") is None
    assert key_aliases("10.1234/x") == ["doi:10.1234/x"]
    assert key_aliases("s2:5") == ["s2:5"]


def test_normalize_title_folds_accents_case_punctuation():
    assert normalize_title("L’Évaluation, des  MT!") == "l evaluation des mt"
    assert normalize_title("Étiquetage   morpho-syntaxique.") == "etiquetage morpho syntaxique"
    assert normalize_title(None) == ""


@given(st.text())
def test_normalize_title_is_idempotent(text):
    once = normalize_title(text)
    assert normalize_title(once) == once


def test_dois_in_text() -> None:
    assert dois_in_text("doi: 10.1000/AB.c. and https://doi.org/10.2000/x(1)2).") == [
        "10.1000/ab.c", "10.2000/x(1)2"]
    assert dois_in_text("(see 10.1023/A:1010933404324), p. 3") == ["10.1023/a:1010933404324"]
    assert dois_in_text(None) == []
