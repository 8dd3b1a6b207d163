"""The tasks a backend is asked to do, with OpenMSD §7's prompts and one worked example.

``summary64`` and ``summary128`` are the paper's two prompts (the short and the long
summary); ``translate`` turns a passage into English (the top-N baseline's translation).
A base model (Gemma-3-270M) gets the worked example before the passage (one-shot); an
instruction-tuned endpoint gets the instruction and the passage only.

The example is a TALN train-split paper (``recital-2001-long-004``, never in a test pool):
its French abstract, and English answers written from its authors' English abstract.
"""

from __future__ import annotations

from difflib import SequenceMatcher

#: Output this similar to the worked example's answer is the example copied, not a summary.
COPY_RATIO = 0.6

INSTRUCTIONS: dict[str, str] = {
    "summary64": "Summarize the passage below with no more than 30 words in English.",
    "summary128": "Extract the three most important findings from the passage below, and "
                  "translate them to English.",
    "translate": "Translate the passage below to English.",
}
#: The summary task of each ``--length`` (OpenMSD §7).
SUMMARY_TASK = {64: "summary64", 128: "summary128"}

EXAMPLE_PASSAGE = (
    "Cet article présente un système de reconnaissance des noms propres pour le Français. Les "
    "spécifications de ce système ont été réalisées à la suite d’une étude en corpus et "
    "s’appuient sur des critères graphiques et référentiels. Les critères graphiques permettent "
    "de concevoir les traitements à mettre en place pour la délimitation des noms propres et la "
    "catégorisation repose sur les critères référentiels. Le système se base sur des règles de "
    "grammaire, exploite des lexiques spécialisés et comporte un module d’apprentissage. Les "
    "performances atteintes par le système, sur les anthroponymes, sont de 89,4% pour le rappel "
    "et 94,6% pour la précision.")
EXAMPLE_ANSWERS: dict[str, str] = {
    "summary64": "A rule-based French proper-name recognizer using graphical and referential "
                 "criteria, specialized lexicons and a learning module reaches 94.6% precision "
                 "and 89.4% recall on person names.",
    "summary128": "(1) Graphical criteria delimit proper names in French text and referential "
                  "criteria categorize them. (2) A rule-based system with specialized lexicons "
                  "and a learning module implements these criteria. (3) On person names it "
                  "reaches 89.4% recall and 94.6% precision.",
    "translate": "This paper presents a French proper name recognizer. The specifications of "
                 "this system have been elaborated through corpus investigation upon graphical "
                 "and semantic criteria. The graphical criteria allow to presuppose some "
                 "processes to identify proper names boundaries and the semantic classification "
                 "is used to categorize them. The system is grammar-rule based, uses specialized "
                 "lexicons, and includes a learning processing. The system performance evaluated "
                 "on the categories composing anthroponym class achieves 94.6% of precision and "
                 "89.4% of recall.",
}


def one_line(text: str) -> str:
    """``text`` with its whitespace (newlines included) collapsed to single spaces."""
    return " ".join(text.split())


def few_shot(task: str, passage: str) -> str:
    """The completion prompt for a base model: the worked example, then ``passage``; the
    model's answer is what it writes after the last ``English:`` up to the end of the line."""
    instruction = INSTRUCTIONS[task]
    return (f"{instruction}\n\nPassage: {EXAMPLE_PASSAGE}\nEnglish: {EXAMPLE_ANSWERS[task]}\n\n"
            f"{instruction}\n\nPassage: {one_line(passage)}\nEnglish:")


def chat_message(task: str, passage: str) -> str:
    """The user message for an instruction-tuned model: the instruction, then the passage."""
    return f"{INSTRUCTIONS[task]}\n\n{one_line(passage)}"


def copies_example(task: str, text: str) -> bool:
    """Whether ``text`` is the worked example's answer repeated (a small base model does
    that now and then instead of summarising the new passage).

    >>> copies_example("summary64", EXAMPLE_ANSWERS["summary64"])
    True
    >>> copies_example("summary64", "We present a tool to query annotated corpora.")
    False
    """
    return SequenceMatcher(None, one_line(text).lower(),
                           EXAMPLE_ANSWERS[task].lower()).ratio() >= COPY_RATIO
