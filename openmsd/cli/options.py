"""The arguments and options several commands share, defined once (``Annotated`` aliases)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["BackendOpt", "CorpusArg", "ExportOpt", "JsonOpt", "K", "LangOpt", "SplitOpt",
           "StrictOpt", "YearOpt"]

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
    help="torch, onnx-q4 (ONNX Runtime, 4-bit weights), onnx (int8) or onnx-fp32; by default "
         "the backend the corpus's vectors were made with, else the model's own (onnx-fp32 for "
         "e5-small-multilingual, onnx for minilm-en).")]
SplitOpt = Annotated[str | None, typer.Option(
    help="Only the papers of this relations split (idt, odt, test = idt + odt, ...).")]
StrictOpt = Annotated[bool, typer.Option(help="Fail on the first problem in the input.")]
