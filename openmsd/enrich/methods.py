"""The three ways to get an English summary of a non-English paper (OpenMSD §7).

Each method takes papers (the columns of :func:`openmsd.corpus.summaries.read_papers`) and a
target length in tokens (:mod:`openmsd.enrich.tokens`), and returns one :class:`Outcome` per
paper: a summary and who wrote it, or why there is none.

- ``author``: the English abstract the source carries (SciELO, TALN and many journals print
  one), else its English title; cut to the length. Free, and written by the authors.
- ``topn``: the English translation of the abstract's first N tokens (the paper's TopN
  baseline). The translation is the source's English abstract when it has one (the authors'
  translation, cut to N tokens); otherwise a translator backend (Apertium for es/ca/gl, or a
  generator asked to translate) translates the first N tokens of the abstract.
- ``llm``: a generator asked with the paper's prompt of that length (``summary64`` /
  ``summary128``); over-length output is cut to the length.

Generated text that is empty, not English (CLD3) or a copy of the prompt's worked example
is asked for again, sampled at
``temperature`` 0.7, up to ``attempts`` times in all, then recorded as failed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import pyarrow as pa

from openmsd.enrich.english import rejection
from openmsd.enrich.generator import Generated, Generator
from openmsd.enrich.prompts import SUMMARY_TASK, copies_example
from openmsd.enrich.tokens import SummaryTokenizer

RETRY_TEMPERATURE = 0.7
#: Generated tokens allowed beyond the target length (the output is cut afterwards).
MARGIN = 16


@dataclass(frozen=True)
class Outcome:
    """A paper's result: ``status`` ``ok`` (with ``summary``, ``source``), ``failed`` or
    ``no_abstract`` (with ``reason``); ``generated_tokens`` spent on it."""

    status: Literal["ok", "failed", "no_abstract"]
    summary: str | None = None
    source: str | None = None
    reason: str | None = None
    generated_tokens: int = 0


def _ok(text: str, source: str, length: int, tokenizer: SummaryTokenizer,
        generated: int = 0) -> Outcome:
    return Outcome("ok", tokenizer.truncate(text, length), source, None, generated)


def generate_checked(generator: Generator, task: str, passages: Sequence[str],
                     languages: Sequence[str | None], max_new_tokens: int, attempts: int = 2
                     ) -> list[tuple[Generated, str | None]]:
    """``generator``'s answers, each with None when it is English text or the reason it is
    rejected; rejected ones asked again (sampled) up to ``attempts`` times in all."""
    results: list[tuple[Generated, str | None]] = [(Generated(None), "not asked")] * len(passages)
    spent = [0] * len(passages)
    todo = list(range(len(passages)))
    for attempt in range(max(1, attempts)):
        if not todo:
            break
        answers = generator.generate(task, [passages[i] for i in todo],
                                     [languages[i] for i in todo], max_new_tokens,
                                     RETRY_TEMPERATURE if attempt else 0.0)
        reasons = [reason or ("copied the prompt's worked example"
                              if copies_example(task, answer.text or "") else None)
                   for answer, reason in zip(answers, rejection([a.text for a in answers]),
                                             strict=True)]
        for i, answer, reason in zip(todo, answers, reasons, strict=True):
            spent[i] += answer.tokens
            results[i] = (Generated(answer.text, spent[i], answer.error),
                          answer.error or reason)
        todo = [i for i in todo if results[i][1] is not None]
    return results


def author(papers: pa.Table, length: int, tokenizer: SummaryTokenizer,
           generator: Generator | None = None, attempts: int = 2) -> list[Outcome]:
    """The source's English abstract, else its English title, cut to ``length`` tokens."""
    out = []
    for en_title, en_abstract in zip(papers["en_title"].to_pylist(),
                                     papers["en_abstract"].to_pylist(), strict=True):
        text = en_abstract or en_title
        out.append(_ok(text, "author", length, tokenizer) if text else
                   Outcome("failed", reason="the source has no English title or abstract"))
    return out


def topn(papers: pa.Table, length: int, tokenizer: SummaryTokenizer,
         generator: Generator | None = None, attempts: int = 2) -> list[Outcome]:
    """The first ``length`` tokens of the English abstract: the source's, else ``generator``'s
    translation of the abstract's first ``length`` tokens."""
    out: list[Outcome | None] = []
    missing: list[int] = []
    for i, (abstract, en_abstract) in enumerate(zip(papers["abstract"].to_pylist(),
                                                    papers["en_abstract"].to_pylist(),
                                                    strict=True)):
        if en_abstract:
            out.append(_ok(en_abstract, "author", length, tokenizer))
        elif not (abstract and abstract.strip()):
            out.append(Outcome("no_abstract", reason="no abstract"))
        elif generator is None:
            out.append(Outcome("failed", reason="no English abstract in the source and no "
                                                "translator backend"))
        else:
            out.append(None)
            missing.append(i)
    if missing:
        languages = papers["language"].to_pylist()
        abstracts = papers["abstract"].to_pylist()
        answers = generate_checked(
            generator, "translate", [tokenizer.truncate(abstracts[i], length) for i in missing],
            [languages[i] for i in missing], 2 * length, attempts)
        for i, (answer, reason) in zip(missing, answers, strict=True):
            out[i] = (Outcome("failed", reason=reason, generated_tokens=answer.tokens) if reason
                      else _ok(answer.text or "", generator.name, length, tokenizer,
                               answer.tokens))
    return [o for o in out if o is not None]


def llm(papers: pa.Table, length: int, tokenizer: SummaryTokenizer,
        generator: Generator | None = None, attempts: int = 2) -> list[Outcome]:
    """``generator``'s answer to the paper's ``length`` prompt over the abstract, cut to
    ``length`` tokens."""
    if generator is None:
        raise ValueError("the llm method needs a generator backend")
    if length not in SUMMARY_TASK:
        raise ValueError(f"the llm method has prompts for lengths {sorted(SUMMARY_TASK)}, "
                         f"not {length}")
    abstracts = papers["abstract"].to_pylist()
    languages = papers["language"].to_pylist()
    asked = [i for i, a in enumerate(abstracts) if a and a.strip()]
    answers = dict(zip(asked, generate_checked(
        generator, SUMMARY_TASK[length], [abstracts[i] for i in asked],
        [languages[i] for i in asked], length + MARGIN, attempts), strict=True))
    out = []
    for i in range(len(abstracts)):
        if i not in answers:
            out.append(Outcome("no_abstract", reason="no abstract"))
            continue
        answer, reason = answers[i]
        out.append(Outcome("failed", reason=reason, generated_tokens=answer.tokens) if reason
                   else _ok(answer.text or "", generator.name, length, tokenizer, answer.tokens))
    return out


Method = Callable[..., list[Outcome]]
METHODS: dict[str, Method] = {"author": author, "topn": topn, "llm": llm}
