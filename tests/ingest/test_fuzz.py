"""Fuzz every reader: no input crashes it, and whatever it yields fits the staged schema."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openmsd.corpus import STAGED
from openmsd.ingest import formats
from openmsd.report import Report

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=12,
)

# Field names of each JSON format, so generated objects reach the readers' field handling.
KEYS = {
    "openalex": ["id", "doi", "title", "display_name", "publication_year", "language",
                 "abstract_inverted_index", "referenced_works", "authorships", "ids",
                 "primary_location", "concepts", "keywords", "topics"],
    "unpaywall": ["doi", "title", "year", "journal_name", "z_authors", "genre", "is_oa"],
    "s2orc": ["paper_id", "title", "abstract", "year", "doi", "authors", "venue", "journal",
              "outbound_citations", "inbound_citations", "mag_field_of_study", "mag_id"],
    "unarxive": ["paper_id", "_source_hash", "metadata", "abstract", "body_text",
                 "bib_entries", "ref_entries"],
    "jsonl": ["id", "doi", "title", "abstract", "year", "authors", "keywords", "translations",
              "references", "language", "full_text"],
    "crossref": ["DOI", "title", "abstract", "reference", "author", "issued", "language",
                 "container-title", "subject"],
}

XML_SEEDS = {
    "jats": """<article xml:lang="pt"><front><article-meta>
<article-id pub-id-type="doi">10.1590/x</article-id><title-group><article-title>{0}</article-title>
<trans-title-group xml:lang="en"><trans-title>{1}</trans-title></trans-title-group></title-group>
<abstract><p>{0}</p></abstract><trans-abstract xml:lang="en"><p>{1}</p></trans-abstract>
</article-meta></front><body><p>{1} <xref ref-type="bibr" rid="B1 {0}">1</xref></p></body>
<back><ref-list><ref id="B1"><mixed-citation>{0}</mixed-citation><element-citation>
<article-title>{1}</article-title><year>{0}</year><pub-id pub-id-type="doi">{1}</pub-id>
</element-citation></ref></ref-list></back></article>""",
    "parscit": """<algorithms><algorithm name="ParsCit"><citationList>
<citation valid="{0}"><authors><author>{1}</author></authors><title>{0}</title><date>{1}</date>
<contexts><context position="{0}" citStr="{1}">{0}</context></contexts>
<rawString>{1}</rawString></citation></citationList></algorithm></algorithms>""",
}


def run_reader(name: str, content: bytes) -> None:
    reader = formats.get_reader(name)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "input"
        path.write_bytes(content)
        records = list(reader.read(path, Report()))
    by_kind: dict[str, list[dict]] = {}
    for kind, record in records:
        assert kind in STAGED
        by_kind.setdefault(kind, []).append({**record, "seq": 0})
    for kind, rows in by_kind.items():
        pa.Table.from_pylist(rows, schema=STAGED[kind])  # types fit the schema


settings_ = settings(max_examples=60, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", formats.FORMATS)
@settings_
@given(content=st.binary(max_size=300))
def test_random_bytes_never_crash(name, content):
    run_reader(name, content)


@pytest.mark.parametrize("name", sorted(KEYS))
@settings_
@given(data=st.data())
def test_json_objects_with_the_formats_keys_never_crash(name, data):
    keys = KEYS[name]
    objects = data.draw(st.lists(st.dictionaries(st.sampled_from(keys), JSON, max_size=len(keys)),
                                 min_size=1, max_size=3))
    if name == "crossref":
        content = json.dumps({"items": objects}).encode()
    else:
        content = b"\n".join(json.dumps(o).encode() for o in objects)
    run_reader(name, content)


@pytest.mark.parametrize("name", sorted(XML_SEEDS))
@settings_
@given(a=st.text(max_size=15), b=st.text(max_size=15), cut=st.integers(0, 2000))
def test_xml_with_odd_text_and_truncation_never_crashes(name, a, b, cut):
    from xml.sax.saxutils import escape

    document = XML_SEEDS[name].format(escape(a, {'"': "&quot;"}), escape(b, {'"': "&quot;"}))
    run_reader(name, document.encode("utf-8", "surrogatepass"))
    run_reader(name, document.encode("utf-8", "surrogatepass")[:cut])


@settings_
@given(rows=st.lists(st.lists(st.text(max_size=12), max_size=8), max_size=5))
def test_coci_rows_never_crash(rows):
    import csv
    import io

    buffer = io.StringIO()
    csv.writer(buffer).writerows([["oci", "citing", "cited", "creation", "timespan",
                                   "journal_sc", "author_sc"], *rows])
    run_reader("coci", buffer.getvalue().encode("utf-8", "surrogatepass"))


@settings_
@given(rows=st.lists(st.lists(st.text(max_size=12), max_size=12), max_size=5),
       ids=st.lists(st.sampled_from(["omid:br/061", "doi:10.1234/a", "pmid:1", "meta:br/",
                                     "openalex:W1", "arxiv:", "doi:"]), max_size=4))
def test_ocmeta_rows_never_crash(rows, ids):
    import csv
    import io

    buffer = io.StringIO()
    csv.writer(buffer).writerows([["id", "title", "author", "issue", "volume", "venue", "page",
                                   "pub_date", "type", "publisher", "editor"],
                                  [" ".join(ids), *["x"] * 10], *rows])
    run_reader("ocmeta", buffer.getvalue().encode("utf-8", "surrogatepass"))
