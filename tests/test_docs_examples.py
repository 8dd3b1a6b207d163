"""Every command the README and the docs show in a ``bash`` block works as written.

* ``curl`` examples run against a real ``openmsd serve`` (uvicorn on a loopback port) of the
  demo corpus, and must be answered 2xx;
* ``openmsd`` examples are parsed by the command line itself (an unknown command or option, or
  a value of the wrong type, fails); synopsis brackets (``[--json]``) are read as their
  contents;
* the read-only ones on ``demo-corpus`` (``related``, ``search``, ``recommend``, ``corpus``)
  run on the demo corpus and must succeed.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```bash\n(.*?)^```", re.M | re.S)
SYNOPSIS = re.compile(r"\[(-[^\[\]]*)\](?:\.\.\.)?")
SEPARATORS = {"&&", "||", ";", "|", "&"}
REDIRECTS = {">", ">>", "<", "2>", "&>"}
READ_ONLY = {"related", "search", "recommend", "corpus"}


@dataclass(frozen=True)
class Example:
    """One command of a ``bash`` block: where it is and its words (redirections left out)."""

    path: Path
    line: int
    words: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}: {shlex.join(self.words)}"


def _synopsis(line: str) -> str:
    """``[--lang en]`` read as ``--lang en``; ``[--engine duckdb|spark]`` as its first choice."""
    return SYNOPSIS.sub(lambda m: re.sub(r"\|[^\s\]]+", "", m.group(1)), line)


def commands(line: str) -> Iterator[list[str]]:
    """The simple commands of a shell line (split at ``&&``, ``|``, ``;``), without
    redirections and comments."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words: list[str] = []
    skip = False
    for token in [*lexer, ";"]:
        if skip:
            skip = False
        elif token in SEPARATORS:
            if words:
                yield words
            words = []
        elif token in REDIRECTS:
            skip = True
        else:
            words.append(token)


def examples() -> list[Example]:
    """Every ``openmsd`` and ``curl`` command in the ``bash`` blocks of README.md and docs/."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for block in BLOCK.finditer(text):
            first = text[:block.start()].count("\n") + 2
            lines = block.group(1).split("\n")
            number, pending = 0, ""
            for number, raw in enumerate(lines, first):
                pending += raw[:-1] + " " if raw.endswith("\\") else raw
                if raw.endswith("\\"):
                    continue
                try:
                    parsed = list(commands(_synopsis(pending)))
                except ValueError:  # a quoted string goes on over the next line
                    pending += "\n"
                    continue
                start = number - pending.count("\n")
                pending = ""
                found += [Example(path, start, tuple(words)) for words in parsed
                          if words[0] in ("openmsd", "curl")]
    return found


EXAMPLES = examples()
CLI = [e for e in EXAMPLES if e.words[0] == "openmsd"]
CURL = [e for e in EXAMPLES if e.words[0] == "curl"]


def test_the_docs_hold_examples() -> None:
    assert len(CLI) > 50 and len(CURL) >= 5, (len(CLI), len(CURL))


@pytest.mark.parametrize("example", CLI, ids=str)
def test_cli_example_parses(example: Example) -> None:
    import typer

    from openmsd.cli import app

    command = typer.main.get_command(app)
    args = list(example.words[1:])
    while hasattr(command, "commands"):  # a group: the next word names its command
        assert args, f"{example}: no command after {command.name!r}"
        sub = command.get_command(None, args[0])
        if sub is None and "build" in command.commands:
            command = command.commands["build"]  # 'relations CORPUS' is 'relations build CORPUS'
            break
        assert sub is not None, f"{example}: no command {args[0]!r}"
        command, args = sub, args[1:]
    try:
        command.make_context(command.name or "", args)
    except typer.TyperException as error:
        pytest.fail(f"{example}: {error}")


@pytest.fixture(scope="module")
def demo_server(demo_run) -> Iterator[str]:
    from openmsd.server import create_app
    from tests.server.conftest import serve_in_thread

    with serve_in_thread(create_app(demo_run[0], ["muse-v3"], watch_s=0)) as url:
        yield url


@pytest.mark.parametrize("example", CURL, ids=str)
def test_curl_example_is_answered(example: Example, demo_server: str) -> None:
    words = [w.replace("http://127.0.0.1:8000", demo_server) for w in example.words]
    done = subprocess.run([*words, "--max-time", "60", "-o", "/dev/null", "-w", "%{http_code}"],
                          capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, f"{example}: curl failed: {done.stderr}"
    assert done.stdout.startswith("2"), f"{example}: HTTP {done.stdout}"


DEMO = [e for e in CLI if len(e.words) > 2 and e.words[1] in READ_ONLY
        and "demo-corpus" in e.words]


@pytest.mark.parametrize("example", DEMO, ids=str)
def test_demo_example_runs(example: Example, demo_run, tmp_path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from openmsd.cli import app

    corpus = demo_run[0]
    args = [str(corpus) if w == "demo-corpus" else
            str(ROOT / w) if w.startswith("openmsd/data/") else w for w in example.words[1:]]
    monkeypatch.chdir(tmp_path)  # pictures and exports land here
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, f"{example}: {result.output}"
    assert result.output.strip(), f"{example}: printed nothing"
