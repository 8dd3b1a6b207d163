"""The arguments and options several commands share, defined once (``Annotated`` aliases), and
the package constants the commands' help and defaults show.

Typer reads every command's signature when the program starts, so what a signature names must
import at once: a package face would load numpy, DuckDB or torch before ``--help``. The constants
below are the packages' own, written here; ``tests/test_cli_start.py`` checks that each equals
the package's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["CUTOFF", "DEFAULT_MAX_GROUP", "DEFAULT_MODEL", "FORMATS", "HNSW_THRESHOLD", "HYBRID",
           "BackendOpt", "CorpusArg", "ExportOpt", "IncludeNonPapersOpt", "JsonOpt", "K",
           "LangOpt", "NegativeOpt", "SplitOpt", "StrictOpt", "YearOpt"]

CUTOFF = 100
"""``openmsd.eval.CUTOFF``: the ranks retrieval evaluation scores."""
DEFAULT_MAX_GROUP = 256
"""``openmsd.relations.DEFAULT_MAX_GROUP``: the largest citation group counted exactly."""
DEFAULT_MODEL = "e5-small-multilingual"
"""``openmsd.models.DEFAULT_MODEL``: the dense model commands use by default."""
FORMATS = ["snapshot", "openalex", "crossref", "unpaywall", "coci", "ocmeta", "jats", "parscit",
           "unarxive", "s2orc", "jsonl"]
"""``openmsd.ingest.FORMATS``: the source formats ``openmsd ingest`` reads."""
HNSW_THRESHOLD = 50_000
"""``openmsd.index.HNSW_THRESHOLD``: from this many papers ``--kind auto`` builds HNSW."""
HYBRID = "hybrid"
"""``openmsd.rank.HYBRID``: the fusion ranker evaluation uses by default."""

CorpusArg = Annotated[Path, typer.Argument(help="The corpus directory.")]
"""The corpus directory a command reads (and writes)."""
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
"""``--json``: the result as JSON on stdout."""
K = Annotated[int, typer.Option("-k", min=1, help="How many papers.")]
LangOpt = Annotated[list[str] | None, typer.Option(help="Only these languages.")]
YearOpt = Annotated[str | None, typer.Option(help="YEAR, FROM-TO, FROM- or -TO.")]
ExportOpt = Annotated[str | None, typer.Option(
    help="Print the results as bib (BibTeX), ris or csl (CSL-JSON).")]
BackendOpt = Annotated[str | None, typer.Option(
    help="torch, onnx-sq8 (ONNX Runtime, int8 per token), onnx-q4 (4-bit weights), onnx "
         "(int8 per batch), onnx-fp32 or cuda-fp16 (PyTorch float16 on a CUDA GPU); by default "
         "the backend the corpus's vectors were made with, else cuda-fp16 where there is a "
         "GPU, else the model's own (onnx-sq8 for e5-small-multilingual, onnx for "
         "minilm-en).")]
SplitOpt = Annotated[str | None, typer.Option(
    help="Only the papers of this relations split (idt, odt, test = idt + odt, ...).")]
StrictOpt = Annotated[bool, typer.Option(help="Fail on the first problem in the input.")]
IncludeNonPapersOpt = Annotated[bool, typer.Option(
    "--include-non-papers", help="Rank records that are not papers too (errata, retraction "
    "notices, editorials, paratext, book reviews, records without abstract, full text or "
    "references): by default they are left out, and counted.")]
"""``--include-non-papers``: records that are not papers are results too."""
NegativeOpt = Annotated[list[Path] | None, typer.Option(
    help="A library of papers to steer away from.")]
"""``--negative``: a library whose papers a ranking for a library moves away from."""
