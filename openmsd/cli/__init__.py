"""The ``openmsd`` command line: one thin module per command group, assembled here.

Each module (:mod:`~openmsd.cli.corpus`, :mod:`~openmsd.cli.search`, ...) holds its commands
on a Typer app of its own; they share the options of :mod:`openmsd.cli.options` and print
through :mod:`openmsd.cli.output`. Tables and report files come from each package's report
code, never from here."""

from __future__ import annotations

import atexit
import contextlib
import errno
import logging
import os
import re
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from openmsd import __version__
from openmsd.cli import (
    corpus,
    demo,
    enrich,
    eval,
    fetch,
    models,
    recommend,
    relations,
    robustness,
    search,
    serve,
    train,
    update,
    watch,
)
from openmsd.cli.output import err, fail, out

__all__ = ["SAMPLE", "app", "main"]

SAMPLE = Path(__file__).parent.parent / "data" / "sample"
"""The sample corpus shipped with openmsd (what ``openmsd demo`` reads)."""


def _join_lines(text: str | None) -> str | None:
    r"""Help text with the line breaks of a docstring joined (paragraphs kept).

    >>> _join_lines("The papers most related\n    to a paper.\n\nSecond paragraph.")
    'The papers most related to a paper.\n\nSecond paragraph.'
    """
    return re.sub(r"(?<=\S)[ \t]*\n[ \t]*(?=\S)", " ", text) if text else text


def _untyped_flags(params: list[Any]) -> list[Any]:
    """``params`` with each flag's type left out of the help (a flag takes no value)."""
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    return params


def _tidy(command: Any) -> Any:
    """``command`` (and its subcommands) with help texts of whole lines, and flags shown
    without a type (``--json``, not ``--json <bool>``: a flag takes no value)."""
    if command is not None and not getattr(command, "_tidied", False):
        command.help = _join_lines(command.help)
        command.short_help = _join_lines(command.short_help)
        get_params = command.get_params
        command.get_params = lambda ctx: _untyped_flags(get_params(ctx))  # --help too
        command._tidied = True
        for sub in getattr(command, "commands", {}).values():
            _tidy(sub)
    return command


class _MainGroup(TyperGroup):
    """The top-level group: ``demo`` listed first, help texts without mid-sentence breaks."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _untyped_flags(super().get_params(ctx))

    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        return sorted(names, key=lambda name: name != "demo")

    def get_command(self, ctx: Any, name: str) -> Any:
        return _tidy(super().get_command(ctx, name))

    def invoke(self, ctx: Any) -> Any:
        """Run the command; a write the machine refused (permission, file-size limit, full
        disk) or a damaged file it read (:class:`~openmsd.artifact.ArtifactError`) ends it
        with one line naming the file and exit status 2, not a traceback. Every write is
        atomic, so what was there before is intact."""
        try:
            return super().invoke(ctx)
        except typer.Exit:  # a command's --help, or a command that ended itself
            raise
        except Exception as error:
            # lazy: a command loads its own code only (openmsd --help start time)
            from openmsd.artifact import ArtifactError
            from openmsd.io import refusal

            if isinstance(error, ArtifactError):  # a damaged file: named, with its rebuild
                fail(str(error))
            if isinstance(error, OSError) and error.errno == errno.ENAMETOOLONG:
                name = str(error.filename or "")
                shown = name if len(name) <= 80 else f"{name[:60]}…{name[-10:]}"
                fail(f"{shown}: a name of {len(name):,} characters, longer than the file "
                     "system allows (check --model and the paths given)")
            message = refusal(error)
            if message is None:
                raise
            fail(message)


app = typer.Typer(cls=_MainGroup, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Multilingual related-paper search and citation recommendation "
                       "(OpenMSD). New here? Run 'openmsd demo'.")


def _print_version(value: bool) -> None:
    """``--version``: print ``openmsd VERSION`` and end."""
    if value:
        out.print(f"openmsd {__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def _options(version: Annotated[bool, typer.Option(
        "--version", callback=_print_version, is_eager=True,
        help="Print the version and exit.")] = False) -> None:
    # the options of 'openmsd' itself, before any command; the help is the app's
    pass


for _commands in (demo.app, update.app, corpus.app, models.app, search.app,
                  recommend.app, train.app,
                  robustness.app, enrich.app, serve.app, watch.app):
    app.add_typer(_commands)  # commands at the top level: 'openmsd ingest', ...
app.add_typer(corpus.corpus_app, name="corpus")
app.add_typer(fetch.fetch_app, name="fetch")
app.add_typer(relations.relations_app, name="relations")
app.add_typer(models.models_app, name="models")
app.add_typer(models.index_app, name="index")
app.add_typer(eval.eval_app, name="eval")


def main() -> None:
    """The ``openmsd`` entry point: run the command, then end the process at once.

    Native libraries keep thread pools alive until their C++ static destructors run during
    ``exit()`` (ONNX Runtime's, PyTorch's, DuckDB's task scheduler); under load, one of them
    can still be joinable then and the process aborts with "terminate called without an active
    exception" (exit 134) after printing its results. So once the command is done, output is
    flushed, Python's exit handlers run, and the process ends with ``os._exit``, before any
    static destructor."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.cli.output import build_notice
    from openmsd.models import announcing_builds

    try:
        with announcing_builds(build_notice):  # a model built on first use says so
            app()
        code: int = 0
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            code = done.code or 0
        else:
            err.print(str(done.code), highlight=False)
            code = 1
    except KeyboardInterrupt:
        code = 130
    atexit._run_exitfuncs()  # what a normal exit runs first (finalizers, temp directories)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
