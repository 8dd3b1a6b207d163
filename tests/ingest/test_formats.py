"""Format detection by content over the real files and hand-written ones of every format."""

from __future__ import annotations

import csv
import io
import json

import pytest

from openmsd.ingest import formats
from openmsd.report import IngestError

REAL = {
    "taln/papers.jsonl": "jsonl",
    "taln/parscit/recital-2001-long-001.parscit.xml": "parscit",
    "scielo-jats/0006-8705-brag-81-e2022.xml": "jats",
    "unarxive-sample/arXiv_src_2212_086.jsonl": "unarxive",
    "s2orc-sample/metadata_sample.jsonl": "s2orc",
    "unarxive-sample/LICENSE": None,
    "scielo-monolingual/pt-health.xml": None,
}


@pytest.mark.parametrize(("relative", "expected"), REAL.items())
def test_real_files_are_detected(shared_data, relative, expected):
    found = formats.detect(shared_data / relative)
    assert (found.name if found else None) == expected


def _coci() -> str:
    buffer = io.StringIO()
    csv.writer(buffer).writerows([
        ["oci", "citing", "cited", "creation", "timespan", "journal_sc", "author_sc"],
        ["02001000106361", "10.1016/j.socio.2020.1", "10.1000/x", "2020-01", "P1Y", "no", "no"]])
    return buffer.getvalue()


HAND_WRITTEN = {
    "openalex": json.dumps({"id": "https://openalex.org/W2741809807", "doi": None,
                            "title": "The state of OA", "publication_year": 2018,
                            "abstract_inverted_index": {"Despite": [0]},
                            "referenced_works": []}) + "\n",
    "crossref": json.dumps({"items": [{"DOI": "10.1000/x", "title": ["T"],
                                       "container-title": ["J"], "reference-count": 0,
                                       "issued": {"date-parts": [[2020]]},
                                       "type": "journal-article"}]}),
    "unpaywall": json.dumps({"doi": "10.7717/peerj.4375", "title": "The state of OA",
                             "is_oa": True, "oa_status": "gold", "journal_name": "PeerJ",
                             "z_authors": [{"given": "H", "family": "P"}]}) + "\n",
    "coci": _coci(),
}


@pytest.mark.parametrize(("name", "content"), HAND_WRITTEN.items())
def test_hand_written_files_of_every_format_are_detected(tmp_path, name, content):
    path = tmp_path / "input"
    path.write_text(content)
    assert formats.detect(path).name == name


def test_unknown_format_names_the_known_ones():
    with pytest.raises(IngestError, match="expected one of snapshot, openalex, crossref"):
        formats.get_reader("bibtex")
