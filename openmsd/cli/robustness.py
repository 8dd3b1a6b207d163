"""``openmsd robustness``: the robustness suite of dense encoders (Singh & Singh)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from openmsd.cli.options import JsonOpt
from openmsd.cli.output import emit, fail, out
from openmsd.report import IngestError

__all__ = ["app"]

app = typer.Typer()


@app.command("robustness")
def robustness_command(
    papers: Annotated[list[Path], typer.Argument(help="Papers with titles and abstracts: any "
                                                 "input 'openmsd ingest' reads (JSONL, S2ORC, "
                                                 "unarXive, ...); several are pooled.")],
    model: Annotated[list[str], typer.Option(
        "--model", "-m", help="A dense encoder ('openmsd models list', a SentenceTransformer "
                              "directory); repeat to compare models.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Report directory (report.json, "
                                          "report.html, plots, embedding cache).")],
    sample_size: Annotated[int, typer.Option("--sample", help="Seeded sample of papers (0: "
                                             "all).")] = 2000,
    seed: Annotated[int, typer.Option(help="Seed of the sample and of every neighbour.")] = 0,
    lang: Annotated[str, typer.Option(help="Language of the texts used: a paper's own text "
                                      "in it, else its translation into it; 'any' keeps "
                                      "each paper's own text.")] = "en",
    backend: Annotated[str, typer.Option(help="torch, onnx-q4, onnx (int8), onnx-sq8 or onnx-fp32 "
                                         "(faster on CPU; models without an ONNX path run "
                                         "with torch).")] = "torch",
    batch_size: Annotated[int, typer.Option(help="Texts per encoder batch.")] = 32,
    tsne: Annotated[bool, typer.Option(help="Draw the t-SNE of T vs T+A vectors.")] = True,
    examples_from: Annotated[list[Path], typer.Option(
        "--examples-from", help="Quote example texts only from the papers of this input "
                                "(one of PAPERS; repeatable): one whose licence lets the report "
                                "be published.")] = [],  # noqa: B006
    json: JsonOpt = False,
) -> None:
    """The robustness suite (Singh & Singh): short-query alternative-self retrieval (Tasks I,
    II), the 32 textual neighbours (NN1_Ret, NN10_Ret, AOP-10/20, similarity distributions,
    the Table 5 capability matrix), t-SNE; writes DIR/report.json and DIR/report.html."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.models import UnknownModelError, UnsupportedBackendError
    from openmsd.robustness import RobustnessError, run_suite

    try:
        report = run_suite(papers, model, out_dir, sample_size or None, seed,
                           None if lang == "any" else lang, backend, batch_size, tsne,
                           examples_from)
    except (RobustnessError, IngestError, UnknownModelError, UnsupportedBackendError,
            ValueError) as error:
        fail(str(error))
    if json:
        emit(report, True)
        return
    for name, result in report["models"].items():
        cap = ", ".join(f"{c} {v['AOP-20']}{'*' if v['optimal'] else ''}"
                        for c, v in result["capability"].items())
        out.print(f"[bold]{name}[/]: Task I MRR {result['task1']['MRR']} T100 "
                  f"{result['task1']['T100']}; Task II MRR {result['task2']['MRR']} T100 "
                  f"{result['task2']['T100']}; AOP-20 {cap} (* optimal)", highlight=False)
    out.print(f"{report['n_papers']} papers; report in {out_dir / 'report.html'} "
              f"({report['timing_s']['total']} s)", highlight=False)
