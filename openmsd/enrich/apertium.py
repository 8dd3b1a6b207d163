"""Debian's Apertium as a translation backend for Spanish, Catalan and Galician abstracts
(the English pairs Debian packages: ``apertium-eng-spa``, ``apertium-eng-cat``,
``apertium-en-gl``). Rule-based, fast, translation only: it serves ``--method topn``.
Words it does not know are left as they are (``-u``: no ``*`` marks).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from openmsd.enrich.generator import Generated, GeneratorError

#: Source language → the Apertium mode translating it into English.
MODES = {"es": "spa-eng", "ca": "cat-eng", "gl": "gl-en"}
MODES_DIR = Path("/usr/share/apertium/modes")


class Apertium:
    """``apertium -u MODE`` for each passage whose language has an installed pair."""

    name = "apertium"
    tasks = frozenset({"translate"})

    def __init__(self, modes_dir: Path = MODES_DIR, timeout: float = 60.0):
        if shutil.which("apertium") is None:
            raise GeneratorError("apertium is not installed (Debian: apt-get install apertium "
                                 "apertium-eng-spa apertium-eng-cat apertium-en-gl)")
        self.modes = {lang: mode for lang, mode in MODES.items()
                      if (modes_dir / f"{mode}.mode").exists()}
        if not self.modes:
            raise GeneratorError(f"apertium has none of the pairs {', '.join(MODES.values())} "
                                 f"in {modes_dir}")
        self.languages = frozenset(self.modes)
        self.timeout = timeout

    def generate(self, task: str, passages: Sequence[str], languages: Sequence[str | None],
                 max_new_tokens: int, temperature: float = 0.0) -> list[Generated]:
        """The English translation of each passage (``max_new_tokens``, ``temperature``:
        unused; a rule-based translation is the same every time)."""
        if task not in self.tasks:
            return [Generated(None, 0, f"apertium only translates (use --method topn), "
                                       f"not {task}")] * len(passages)
        out = []
        for passage, language in zip(passages, languages, strict=True):
            mode = self.modes.get(language or "")
            if mode is None:
                out.append(Generated(None, 0, f"apertium has no {language}->en pair "
                                              f"(it has {', '.join(sorted(self.modes))})"))
                continue
            done = subprocess.run(["apertium", "-u", mode], input=passage, text=True,
                                  capture_output=True, timeout=self.timeout, check=False)
            text = done.stdout.strip()
            if done.returncode != 0 or not text:
                out.append(Generated(None, 0, f"apertium {mode} failed: "
                                              f"{done.stderr.strip()[:200] or 'no output'}"))
                continue
            out.append(Generated(text, len(text.split())))
        return out
