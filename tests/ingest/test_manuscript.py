"""Reading manuscripts: every format, its markers, its problems, bad files."""

from __future__ import annotations

import pytest

from openmsd.ingest import ManuscriptError, citation_markers, read_manuscript
from openmsd.ingest.manuscript import read_text


def markers(paragraphs: list[str]) -> list[str]:
    return [m for p in paragraphs for m, _ in citation_markers(p)]


def test_plain_text_and_markdown(tmp_path) -> None:
    text = tmp_path / "m.txt"
    text.write_text("Parsers are fast [3].\nThey are accurate (Nivre, 2004).\n\n\nThanks.")
    m = read_manuscript(text)
    assert m.paragraphs == ["Parsers are fast [3]. They are accurate (Nivre, 2004).", "Thanks."]
    assert markers(m.paragraphs) == ["[3]", "(Nivre, 2004)"]
    md = tmp_path / "m.md"
    md.write_text("# Intro\n\nParsers are *fast* [@nivre2004; @kubler].\n\n```\ncode [9]\n```\n"
                  "- a list item with `x` (Smith, 2020)\n")
    m = read_manuscript(md)
    assert m.format == "markdown"
    assert m.paragraphs == ["Intro", "Parsers are fast [@nivre2004; @kubler].",
                            "a list item with x (Smith, 2020)"]  # no code block
    assert markers(m.paragraphs) == ["[@nivre2004; @kubler]", "(Smith, 2020)"]


def test_latex_cites_become_markers_and_empty_ones_are_reported(tmp_path) -> None:
    tex = tmp_path / "paper.tex"
    tex.write_text(r"""\documentclass{article}\usepackage{natbib}
\begin{document}
\section{Introduction}
Dependency parsers are fast~\cite{nivre2004, kubler2009}. We follow \citet[p.~3]{smith}.
Math $x^2$ stays. \cite{}

A \textbf{second} paragraph.
\end{document}""")
    m = read_manuscript(tex)
    assert markers(m.paragraphs) == ["{{cite:nivre2004,kubler2009}}", "{{cite:smith}}"]
    assert any("second paragraph" in p for p in m.paragraphs)
    assert not any("documentclass" in p or "textbf" in p for p in m.paragraphs)
    assert len(m.problems) == 1 and "without a key" in m.problems[0]


def test_real_jats_article(shared_data) -> None:
    m = read_manuscript(shared_data / "scielo-jats" / "1807-0205-paz-62-e202262026.xml")
    assert m.format == "jats" and len(m.paragraphs) > 10
    found = markers(m.paragraphs)
    assert "(Moynihan, 1962)" in found and len(found) > 20
    assert m.problems == []


def test_jats_unknown_rid_is_reported(tmp_path) -> None:
    xml = tmp_path / "a.xml"
    xml.write_text('<article><body><p>Known <xref ref-type="bibr" rid="B1">1</xref> and '
                   'unknown <xref ref-type="bibr" rid="B9">Doe</xref>.</p></body>'
                   '<back><ref-list><ref id="B1"/></ref-list></back></article>')
    m = read_manuscript(xml)
    assert m.paragraphs == ["Known [1] and unknown {{cite:B9}} ."]
    assert len(m.problems) == 1 and "'B9'" in m.problems[0] and "line 1" in m.problems[0]


def test_real_unarxive_paper(shared_data) -> None:
    path = shared_data / "unarxive-sample" / "arXiv_src_2212_086.jsonl"
    first = read_manuscript(path)
    assert first.format == "unarxive" and any("{{cite:" in p for p in first.paragraphs)
    assert not any("{{formula" in p for p in first.paragraphs)
    import orjson

    second_id = orjson.loads(path.read_bytes().splitlines()[1])["paper_id"]
    assert read_manuscript(path, second_id).paragraphs != first.paragraphs
    with pytest.raises(ManuscriptError, match="no paper 'nope'"):
        read_manuscript(path, "nope")


def test_bad_files_say_what_was_expected(tmp_path) -> None:
    with pytest.raises(ManuscriptError, match=r"supported: text .*latex.*jats.*unarxive"):
        read_manuscript(tmp_path / "paper.docx")
    bad = tmp_path / "bad.xml"
    bad.write_text("<article><body>")
    with pytest.raises(ManuscriptError, match=r"bad\.xml: line 1: malformed XML"):
        read_manuscript(bad)
    other = tmp_path / "other.xml"
    other.write_text("<html/>")
    with pytest.raises(ManuscriptError, match="expected <article>"):
        read_manuscript(other)
    latin = tmp_path / "latin.txt"
    latin.write_bytes("café".encode("latin-1"))
    with pytest.raises(ManuscriptError, match="not UTF-8"):
        read_manuscript(latin)
    big = tmp_path / "big.txt"
    big.write_text("x" * 100)
    with pytest.raises(ManuscriptError, match="more than the 10"):
        read_manuscript(big, max_bytes=10)
    assert read_text("").paragraphs == []


def test_latex_without_pylatexenc_names_the_extra(tmp_path, monkeypatch) -> None:
    import sys

    path = tmp_path / "paper.tex"
    path.write_text(r"\begin{document}Parsing \cite{a}.\end{document}")
    monkeypatch.setitem(sys.modules, "pylatexenc", None)  # as where it is not installed
    with pytest.raises(ManuscriptError, match=r"paper\.tex: reading LaTeX needs pylatexenc: "
                                              r"pip install 'openmsd\[serve\]'"):
        read_manuscript(path)


def test_the_readme_install_brings_what_latex_manuscripts_need() -> None:
    """The README's install (``.[models,serve,fetch]``) holds pylatexenc."""
    import re
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    readme = (root / "README.md").read_text()
    installs = [named for named in re.findall(r'pip install -e "\.\[([a-z,]+)\]"', readme)
                if "models" in named.split(",")]  # the installs of the features
    assert installs
    for named in installs:
        wanted = [r for extra in named.split(",") for r in extras.get(extra, [])]
        assert any(r.startswith("pylatexenc") for r in wanted), named
