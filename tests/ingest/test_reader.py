"""Text normalisation shared by the readers."""

from __future__ import annotations

import duckdb

from openmsd.ingest import as_str


def test_as_str_repairs_windows_1252_punctuation_decoded_as_c1_controls():
    assert as_str(" l\x92analyse \x93robuste\x94\x85 ") == "l’analyse “robuste”…"
    assert as_str("e\u0301") == "é"  # NFC
    assert as_str("\x81") == "\x81"  # undefined in Windows-1252: kept
    assert as_str("  ") is None and as_str(None) is None and as_str(3) == "3"


def test_taln_has_no_c1_controls_left_and_its_languages_are_right(taln_corpus):
    papers = str(taln_corpus / "papers.parquet")
    left = duckdb.sql(f"SELECT count(*) FROM read_parquet('{papers}') WHERE regexp_matches("
                      "coalesce(title, '') || coalesce(abstract, ''), "
                      "'[\\x80\\x82-\\x8c\\x8e\\x91-\\x9c\\x9e\\x9f]')")  # the defined ones
    assert left.fetchall() == [(0,)]
    # its French abstract was identified as English while it held U+0092 apostrophes
    language = duckdb.sql(f"SELECT language FROM read_parquet('{papers}') "
                          "WHERE paper_id = 'taln-2003-long-001'").fetchall()
    assert language == [("fr",)]
