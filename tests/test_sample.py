"""The sample shipped with openmsd (what ``openmsd demo`` reads): articles only, each declared
language the one its text is written in, and ATTRIBUTION.md's counts those of the files."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from openmsd.cli import SAMPLE
from openmsd.corpus import identify
from openmsd.corpus.langid import MAX_BYTES, TITLE_SURE, paper_text
from openmsd.ingest import jats
from openmsd.report import Report

ATTRIBUTION = SAMPLE.parent / "ATTRIBUTION.md"


@pytest.fixture(scope="module")
def papers() -> list[dict]:
    report = Report()
    found = [record for path in sorted((SAMPLE / "scielo-jats").glob("*.xml.gz"))
             for kind, record in jats.read(path, report) if kind == "paper"]
    assert report.problems == []
    return found


def test_no_test_file_of_the_schema_examples(papers) -> None:
    titles = [p["title"] or "" for p in papers]
    assert not [t for t in titles if re.search(r"MODIFICADO|VERIFICAR|\bteste?\b", t, re.I)]


def test_each_declared_language_is_the_language_of_the_text(papers) -> None:
    """Language identification with the declarations hidden, on the title, abstract,
    keywords and the start of the body (a commentary's title quotes a Spanish title), agrees
    with every declaration where it is sure (a bare "Errata" is not)."""
    texts = [paper_text(p["title"], p["abstract"], p["keywords"]) + " "
             + (p["full_text"] or "")[:MAX_BYTES] for p in papers]
    found = identify(texts, None, titles=[p["title"] for p in papers])
    wrong = [(p["key"], p["declared_language"], language)
             for p, (language, confidence) in zip(papers, found, strict=True)
             if confidence is not None and confidence >= TITLE_SURE
             and language != p["declared_language"]]
    assert wrong == []
    assert sum(c is not None and c >= TITLE_SURE for _, c in found) >= 0.9 * len(papers)


def test_attribution_counts_the_files(papers) -> None:
    said = re.search(r"(\d+) SciELO journal articles in JATS XML, gzipped \((\d+) declared "
                     r"Portuguese, (\d+) Spanish, (\d+) English", ATTRIBUTION.read_text())
    assert said, f"{ATTRIBUTION}: no count of the SciELO articles"
    languages = Counter(p["declared_language"] for p in papers)
    assert [int(n) for n in said.groups()] == [len(papers), languages["pt"], languages["es"],
                                               languages["en"]]
