"""``related --graph OUT.svg|OUT.png``: the query paper(s) and their related papers drawn as a
picture (:mod:`openmsd.present.picture`), written to a file."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from openmsd.cli.output import err, fail
from openmsd.identifiers import doi_url

if TYPE_CHECKING:
    from openmsd.corpus import Corpus

__all__ = ["GRAPH_K", "ByOpt", "GraphKOpt", "GraphOpt", "SimilarEdgesOpt", "check_graph_target",
           "write_graph"]

GRAPH_K = 30
"""Related papers a picture shows by default."""

GraphOpt = Annotated[Path | None, typer.Option(
    "--graph", help="Also draw the neighbourhood as a picture: OUT.svg or OUT.png.")]
GraphKOpt = Annotated[int, typer.Option("--graph-k", min=1, max=200,
                                        help="Related papers in the picture.")]
ByOpt = Annotated[str, typer.Option(
    "--by", help="Lay the picture out by 'similarity' (close: similar) or 'year' (a time "
                 "axis).")]
SimilarEdgesOpt = Annotated[bool, typer.Option(
    "--similar-edges", help="Also draw an edge between strongly similar papers.")]


def check_graph_target(target: Path | None, by: str) -> None:
    """Fail before any work for an unknown extension or layout."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.present import FORMATS, LAYOUTS

    if target is None:
        return
    if target.suffix.lower() not in FORMATS:
        fail(f"--graph {target}: expected a file name ending in {' or '.join(FORMATS)}, got "
             f"{target.suffix or 'no extension'!r}")
    if by not in LAYOUTS:
        fail(f"--by {by!r}: expected one of {', '.join(LAYOUTS)}")
    if target.suffix.lower() == ".png" and importlib.util.find_spec("matplotlib") is None:
        fail(f"--graph {target}: PNG needs matplotlib: pip install 'openmsd[eval]' (or write "
             ".svg)")
    if target.is_dir():
        fail(f"--graph {target}: a directory; give a file name")
    folder = target.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        fail(f"--graph {target}: cannot write there ({folder} is not a writable folder)")


def _dense_index(corpus: Corpus, model: str | None) -> Any:
    """The dense index whose vectors place the nodes (None when the corpus has none)."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.rank import RankerSpec, dense_key, is_builtin, is_dense
    from openmsd.search import SearchService

    spec = RankerSpec.parse(model, typed=True) if model else None
    dense = str(spec) if spec and not is_builtin(spec) and (
        spec.backend or spec.language or is_dense(spec, corpus)) else None
    try:
        return SearchService(corpus).index(dense_key(corpus, dense))
    except (FileNotFoundError, ValueError):
        return None


def write_graph(target: Path, corpus: Corpus, query_ids: list[str], results: list[Any],
                model: str | None, by: str, similar_edges: bool) -> None:
    """Draw ``query_ids`` and ``results`` and write the picture to ``target``."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.present import STRONG_SIMILARITY, build_neighbourhood, draw, save

    hood = build_neighbourhood(corpus, query_ids, results, _dense_index(corpus, model),
                         STRONG_SIMILARITY if similar_edges else None)
    picture = draw(hood, by)
    try:
        save(picture, target, lambda node: doi_url(node.doi) if node.doi else None)
    except OSError as error:
        fail(f"--graph {target}: cannot write it: {error.strerror or error}")
    shown = sum(label is not None for label in picture.labels)
    err.print(f"{len(hood.nodes)} papers, {len(hood.edges)} edges -> {target} "
              f"({shown} labelled; hover a node for its title and why)", highlight=False,
              markup=False)
