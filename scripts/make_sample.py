"""Rebuild the sample corpus shipped in ``openmsd/data/sample`` from ``../shared/data``.

The sample is small enough for ``openmsd demo`` to run in a minute on two cores, and coherent
enough that its related papers can be judged: every SciELO JATS article of ``../shared/data``
whose ``<license>`` is CC BY (Portuguese, Spanish and English, on public health, plants and
ecology, materials and physics, education and society, language and literature), plus only the
S2ORC and unarXive records on those topics. Those records were chosen once, by hand, among the
records nearest to the SciELO articles (muse-v3 cosine similarity of title + abstract, >= 0.40),
keeping those whose subject matches the SciELO article they are near; the lists below are that
choice, so the build is reproducible without a model. S2ORC records that cite themselves are
left out (their self-citations are input errors). Licences are checked for every record copied:
SciELO CC BY 4.0 (each file's ``<license>``), unarXive papers CC BY 4.0 (each record's
``metadata.license``; the data set itself is CC BY-SA 4.0), S2ORC ODC-By 1.0.

Two SciELO files are not copied as they are: a test file of the SciELO schema examples is left
out (``LEFT_OUT``), and one article whose file declares the wrong language gets its language
corrected (``LANGUAGE_FIXES``; ``tests/test_sample.py`` checks every declared language against
language identification).

Run: ``python scripts/make_sample.py [SHARED_DATA]``. The output is byte-for-byte reproducible
(gzip without time stamps).
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import sys
from pathlib import Path

from lxml import etree

CC_BY = "creativecommons.org/licenses/by/"
XLINK = "{http://www.w3.org/1999/xlink}href"

LEFT_OUT = {
    "hxcB3n9hzmSGz4v6dgzDsxp.xml": "a test file of the SciELO schema examples, not an article "
                                   "(its title: 'ARQUIVO MODIFICADO PARA VERIFICAR "
                                   "FUNCIONALIDADE ...')",
}
"""SciELO files not copied, and why."""
LANGUAGE_FIXES = {
    "2318-0889-tinf-33-e200057.xml": ("pt", "es"),  # title, abstract, keywords, body: Spanish
}
"""SciELO files whose declared language (``<article xml:lang>``) is wrong: (declared, right),
set on the article and on its keyword group."""

# topic -> S2ORC paper ids (metadata_sample.jsonl), all with an abstract
S2ORC_TOPICS = {
    "public health and epidemiology": [
        "18985891", "18982114", "18987535", "199662866", "2878408", "2872613", "2871844",
        "2870542", "18989842", "199663473", "2871533", "147018025", "77498969", "199668067",
        "213341263",
    ],
    "plants, ecology and natural products": [
        "84889401", "84885803", "147012690", "84887726", "84880933", "84886187", "84887639",
        "84881311", "84883393", "84881737", "84880616", "84889950", "84886077", "84882551",
        "84881335", "2879698", "213341382", "199668072", "84880210", "84880089",
    ],
    "materials, chemistry and physics": [
        "94550757", "213460319", "94557639", "94553485", "2871546", "94556018", "94555004",
        "118860835", "123625503", "123624063", "123621535", "123623002", "84886782",
    ],
    "education, information and society": [
        "159358222", "213466784", "2874531", "213460301", "2879270", "147016480", "147011634",
        "18982496", "199665266", "2873021", "2874018", "213344988", "213348463",
    ],
    "language, discourse and culture": [
        "159358864", "147010181", "147010188", "147017534", "147017634", "118867660",
    ],
}
# topic -> 0-based lines of unarXive's arXiv_src_2212_086.jsonl
UNARXIVE_TOPICS = {
    "materials, chemistry and physics": [1, 14, 25, 32, 35],
    "education, information and society": [20, 22],
}


def scielo_licence(path: Path) -> str:
    """The licence URL a JATS file declares (``article-meta/permissions/license``)."""
    tree = etree.parse(str(path), etree.XMLParser(recover=True, resolve_entities=False,
                                                   no_network=True))
    licences = [e.get(XLINK, "") for e in tree.iter("license")]
    if not licences:
        raise SystemExit(f"{path}: no <license> element")
    return licences[0]


def relabel(data: bytes, wrong: str, right: str) -> bytes:
    """JATS ``data`` with the language ``wrong`` declared on ``<article>`` and on its
    ``<kwd-group>`` elements made ``right``.

    >>> relabel(b'<article a="1" xml:lang="pt"><kwd-group xml:lang="pt"/>', "pt", "es")
    b'<article a="1" xml:lang="es"><kwd-group xml:lang="es"/>'
    """
    out, found = data, 0
    for element in (b"article", b"kwd-group"):
        pattern = rb"(<" + element + rb"\b[^>]*?\sxml:lang=\")" + wrong.encode() + rb"\""
        out, n = re.subn(pattern, rb"\g<1>" + right.encode() + b'"', out)
        found += n if element == b"article" else 0
    if found != 1:
        raise SystemExit(f"<article xml:lang={wrong!r}> found {found} times, expected once")
    return out


def _gzip(target: Path, data: bytes) -> None:
    with gzip.GzipFile(target, "wb", mtime=0) as handle:
        handle.write(data)


def main(shared: Path, out: Path) -> dict[str, int]:
    """Write the sample under ``out``; the number of records of each source."""
    if out.exists():
        shutil.rmtree(out)
    counts = {"scielo-jats": 0, "unarxive": 0, "s2orc": 0}
    (out / "scielo-jats").mkdir(parents=True)
    for source in sorted((shared / "scielo-jats").glob("*.xml")):
        if source.name in LEFT_OUT:
            print(f"left out: {source.name}: {LEFT_OUT[source.name]}", file=sys.stderr)
            continue
        if CC_BY not in scielo_licence(source):
            print(f"left out (licence): {source.name}", file=sys.stderr)
            continue
        data = source.read_bytes()
        if source.name in LANGUAGE_FIXES:
            data = relabel(data, *LANGUAGE_FIXES[source.name])
        _gzip(out / "scielo-jats" / f"{source.name}.gz", data)
        counts["scielo-jats"] += 1
    (out / "unarxive").mkdir()
    lines = (shared / "unarxive-sample" / "arXiv_src_2212_086.jsonl").read_text().splitlines()
    chosen = sorted(i for rows in UNARXIVE_TOPICS.values() for i in rows)
    for index in chosen:
        licence = json.loads(lines[index])["metadata"]["license"] or ""
        assert CC_BY in licence, f"unarXive line {index}: {licence}"
    _gzip(out / "unarxive" / "arXiv_src_2212_086.sample.jsonl.gz",
          "".join(lines[i] + "\n" for i in chosen).encode())
    counts["unarxive"] = len(chosen)
    wanted = {paper_id for ids in S2ORC_TOPICS.values() for paper_id in ids}
    records = []
    for line in (shared / "s2orc-sample" / "metadata_sample.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["paper_id"] in wanted:
            assert record.get("abstract"), record["paper_id"]
            assert record["paper_id"] not in (record.get("outbound_citations") or [])
            records.append(line)
    assert len(records) == len(wanted), "an S2ORC id of the lists is not in the sample"
    (out / "s2orc").mkdir()
    _gzip(out / "s2orc" / "metadata_sample.jsonl.gz", "".join(r + "\n" for r in records).encode())
    counts["s2orc"] = len(records)
    return counts


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    shared = Path(sys.argv[1]) if len(sys.argv) > 1 else root.parent / "shared" / "data"
    print(main(shared, root / "openmsd" / "data" / "sample"))
