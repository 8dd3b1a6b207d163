"""Each of the 32 textual neighbours on a real abstract (TALN 2000, the English version of
taln-2000-poster-002), and on the example of the paper's Table 7 where it applies."""

from __future__ import annotations

import json
import re
from itertools import pairwise
from pathlib import Path

import pytest

from openmsd.robustness.neighbours import (
    CATEGORIES,
    NEIGHBOURS,
    Outcome,
    Resources,
    apply,
    by_category,
    load_antonyms,
    top_noun_phrases,
)
from openmsd.robustness.tagging import tag

PAPER = "taln-2000-poster-002"
T7_TITLE = "Source Code Embeddings from Language Models"
T7_ABSTRACT = ("Contextual embeddings are common in NLP. We introduce a representation for "
               "computer programs based on language models. We train deep robust embeddings "
               "using pytorch.")
T7_S1, T7_S2, T7_S3 = ("Contextual embeddings are common in NLP.",
                       "We introduce a representation for computer programs based on language "
                       "models.", "We train deep robust embeddings using pytorch.")


@pytest.fixture(scope="module")
def real(shared_data_module: Path) -> dict:
    """The real paper tagged once, with the top noun phrases of 200 TALN English abstracts."""
    papers = {}
    for line in (shared_data_module / "taln" / "papers.jsonl").open(encoding="utf-8"):
        record = json.loads(line)
        english = (record.get("translations") or {}).get("en") or {}
        if english.get("title") and english.get("abstract"):
            papers[record["id"]] = (english["title"], english["abstract"])
    ids = [PAPER, *[i for i in papers if i != PAPER][:199]]
    abstracts = list(tag([papers[i][1] for i in ids], "en"))
    title, = tag([papers[PAPER][0]], "en")
    res = Resources(top_noun_phrases(abstracts), load_antonyms("en"))
    return {"title": title, "abstract": abstracts[0], "res": res}


@pytest.fixture(scope="module")
def table7() -> dict:
    title, abstract = tag([T7_TITLE, T7_ABSTRACT], "en")
    return {"title": title, "abstract": abstract,
            "res": Resources(frozenset({"computer programs", "a representation"}),
                             load_antonyms("en"))}


def run(paper: dict, code: str, seed: int = 0) -> Outcome:
    return apply(NEIGHBOURS[code], paper["title"], paper["abstract"], PAPER, seed, paper["res"])


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


TITLE = "Topic Identification Challenge Based on Short Word History"


def test_the_32_neighbours_of_table_1_in_five_categories() -> None:
    assert len(NEIGHBOURS) == 32
    assert {c: len(v) for c, v in by_category().items()} == {
        "LL-HS": 5, "LO-HS": 7, "LL-PS": 4, "LO-PS": 11, "LO-DS": 5}
    assert set(by_category()) == set(CATEGORIES)


# -- LL-PS: sentence order -------------------------------------------------------------------

def test_rotation_moves_the_second_half_first(real: dict, table7: dict) -> None:
    out = run(real, "T_ARot")
    assert out.status == "ok" and out.title == TITLE
    assert out.abstract.startswith("Test corpora are very small")
    assert out.abstract.endswith("(less than 200 words for test corpora).")
    assert run(table7, "T_ARot").abstract == f"{T7_S2} {T7_S3} {T7_S1}"  # Table 7


def test_shuffle_reorders_sentences_seeded(real: dict) -> None:
    out = run(real, "T_AShuff")
    assert out.abstract != real["abstract"].text
    assert sorted(out.abstract.split(". ")) != out.abstract.split(". ")  # not the same order
    assert sorted(words(out.abstract)) == sorted(words(real["abstract"].text))
    assert run(real, "T_AShuff") == out  # the same seed, the same neighbour


def test_sort_ascending_and_descending_by_words(real: dict, table7: dict) -> None:
    ascending = run(real, "T_ASortAsc").abstract
    descending = run(real, "T_ASortDesc").abstract
    assert ascending.startswith("Our topic detection methods will be applied")
    assert descending.startswith("The originality and the difficulty")
    assert descending.endswith("applied to speech recognition framework.")
    assert run(table7, "T_ASortAsc").abstract == f"{T7_S1} {T7_S3} {T7_S2}"  # Table 7
    assert run(table7, "T_ASortDesc").abstract == f"{T7_S2} {T7_S3} {T7_S1}"


# -- LO-PS -----------------------------------------------------------------------------------

def test_random_deletion_removes_30_percent_of_words(real: dict) -> None:
    before, after = words(real["abstract"].text), words(run(real, "T_ADelRand").abstract)
    assert abs(len(after) - 0.7 * len(before)) <= 3
    assert run(real, "T_ADelRand", seed=1).abstract != run(real, "T_ADelRand").abstract


def test_delete_adjectives(real: dict, table7: dict) -> None:
    out = run(real, "T_ADelADJ").abstract
    assert "presents methods for topic" in out and "general" not in out
    assert "very because" in out  # "small" gone, the adverb stays
    assert "deep" not in run(table7, "T_ADelADJ").abstract


def test_delete_verbs(real: dict, table7: dict) -> None:
    out = run(real, "T_ADelVB").abstract
    assert out.startswith("This paper several methods")  # "presents" gone
    assert " are " not in out and "applied" not in out  # auxiliaries count as verbs
    assert run(table7, "T_ADelVB").abstract == (  # Table 7 (spaCy keeps "based" as a verb too)
        "Contextual embeddings common in NLP. We a representation for computer programs on "
        "language models. We deep robust embeddings pytorch.")


def test_delete_adverbs(real: dict, table7: dict) -> None:
    out = run(real, "T_ADelADV").abstract
    assert "are small because" in out and "uttering few words" in out
    assert run(table7, "T_ADelADV").status == "unchanged"  # Table 7's example has no adverb


def test_delete_pronouns(real: dict, table7: dict) -> None:
    out = run(real, "T_ADelPR").abstract
    assert "Our" not in out and "which" not in out and "difficulty of work" in out
    assert run(table7, "T_ADelPR").abstract == (
        "Contextual embeddings are common in NLP. introduce a representation for computer "
        "programs based on language models. train deep robust embeddings using pytorch.")


def test_delete_numbers(real: dict, table7: dict) -> None:
    out = run(real, "T_ADelNum").abstract
    assert not re.search(r"\d", out)
    assert "less than words" in out and "for the first hypotheses" in out  # "two" is a number
    assert run(table7, "T_ADelNum").status == "unchanged"  # no number in Table 7's example


def test_delete_top_noun_phrases(real: dict, table7: dict) -> None:
    top = real["res"].top_noun_phrases
    assert "newspaper articles" in top and "topic detection methods" not in top
    out = run(real, "T_ADelTopNNPH").abstract
    assert "newspaper articles" not in out and "this paper" not in out.lower()
    assert "Our topic detection methods will be applied" in out  # not a top phrase: kept
    assert run(table7, "T_ADelTopNNPH").abstract == (  # Table 7
        "Contextual embeddings are common in NLP. We introduce for based on language models. "
        "We train deep robust embeddings using pytorch.")


def test_delete_each_quantile(real: dict, table7: dict) -> None:
    q1, q2, q3 = (run(real, f"T_ADelQ{q}").abstract for q in (1, 2, 3))
    assert q1.startswith("The originality")  # sentences 1-2 of 6 gone
    assert "The originality" not in q2 and "Test corpora are" not in q2
    assert q3.endswith("after uttering only few words.")
    for q, expected in [(1, f"{T7_S2} {T7_S3}"), (2, f"{T7_S1} {T7_S3}"),
                        (3, f"{T7_S1} {T7_S2}")]:  # Table 7
        assert run(table7, f"T_ADelQ{q}").abstract == expected


def test_delete_characters_from_nouns(real: dict) -> None:
    out = run(real, "T_A_DelNNChar")
    for before, after in zip(TITLE.split(), out.title.split(), strict=True):
        dropped = 0 if len(before) <= 3 or before in ("Based", "on") else (
            2 if len(before) > 5 else 1)
        assert len(before) - len(after) == dropped
    assert len(words(out.abstract)) == len(words(real["abstract"].text))
    assert "several" in out.abstract and "general" in out.abstract  # adjectives untouched


# -- LO-DS -----------------------------------------------------------------------------------

def test_delete_nouns(real: dict, table7: dict) -> None:
    out = run(real, "T_ADelNN").abstract
    assert out.startswith("This presents several for on based on")
    assert "82 for" in out  # "%" (a noun here) leaves its space behind
    assert run(table7, "T_ADelNN").abstract == (  # Table 7
        "Contextual are common in . We introduce a for based on . We train deep robust "
        "using .")


def test_delete_noun_phrases(real: dict, table7: dict) -> None:
    out = run(real, "T_ADelNNPH").abstract
    assert "paper" not in out and "topic" not in out and "are very small because" in out
    assert run(table7, "T_ADelNNPH").abstract == (
        "are common in . We introduce for based on . We train using .")


def test_title_without_nouns_and_no_abstract(real: dict, table7: dict) -> None:
    out = run(real, "TDelNN")
    assert (out.status, out.title, out.abstract) == ("ok", "Based on", "")
    assert run(table7, "TDelNN").title == "from"  # Table 7


def test_keep_only_nouns(real: dict, table7: dict) -> None:
    out = run(real, "T_ADelNonNNs").abstract
    assert out.startswith("paper methods topic detection newspaper articles vocabulary")
    assert run(table7, "T_ADelNonNNs").abstract == (  # Table 7, in text order
        "embeddings NLP representation computer programs language models embeddings pytorch")


def test_adjectives_to_antonyms(real: dict, table7: dict) -> None:
    out = run(real, "T_ARepADJ").abstract
    assert "contain many words (more than 200" in out
    assert "are very large" in out and "are not unreliable" in out
    assert run(table7, "T_ARepADJ").abstract == (  # Table 7, word for word
        "Contextual embeddings are individual in NLP. We introduce a representation for "
        "computer programs based on language models. We train shallow frail embeddings using "
        "pytorch.")


# -- LO-HS -----------------------------------------------------------------------------------

def test_delete_determiners(real: dict, table7: dict) -> None:
    out = run(real, "T_ADelDT").abstract
    assert out.startswith("paper presents several methods") and " the " not in out
    assert "introduce representation" in run(table7, "T_ADelDT").abstract  # Table 7


def test_title_edits_by_part_of_speech(real: dict, table7: dict) -> None:
    assert run(real, "TDelNN_A").title == "Based on"
    assert run(real, "TDelVB_A").title == "Topic Identification Challenge on Short Word History"
    assert run(real, "TDelADJ_A").status == "unchanged"  # the tagger finds no adjective
    assert run(real, "TDelDT_A").status == "unchanged"  # nor a determiner
    for code in ("TDelNN_A", "TDelVB_A"):
        assert run(real, code).abstract == real["abstract"].text
    assert run(table7, "TDelNN_A").title == "from"  # Table 7
    assert run(table7, "TDelVB_A").status == "unchanged"  # as in Table 7: no verb


def test_repeat_a_title_noun(real: dict, table7: dict) -> None:
    out = run(real, "TRepNNT_A").title.split()
    assert len(out) == len(TITLE.split()) + 1
    assert any(a == b for a, b in pairwise(out))
    assert re.fullmatch(r"(\w+ )?(\w+) \2 .*", run(table7, "TRepNNT_A").title)


def test_add_frequent_abstract_nouns_to_title(real: dict, table7: dict) -> None:
    out = run(real, "TRepNNA_A").title
    assert out.startswith(TITLE + " topic words detection methods")
    assert run(table7, "TRepNNA_A").title == (  # Table 7
        "Source Code Embeddings from Language Models embeddings NLP representation computer")


# -- LL-HS -----------------------------------------------------------------------------------

def test_upper_case_nouns_or_the_rest(real: dict, table7: dict) -> None:
    assert run(real, "TNNU_A").title == "TOPIC IDENTIFICATION CHALLENGE Based on SHORT WORD " \
                                        "HISTORY"
    assert run(real, "TNonNNU_A").title == "Topic Identification Challenge BASED ON Short Word " \
                                           "History"
    abstract_nouns = run(real, "T_ANNU").abstract
    assert abstract_nouns.startswith("This PAPER presents several METHODS")
    assert run(real, "T_ANonNNU").abstract.startswith("THIS paper PRESENTS SEVERAL methods")
    for code in ("TNNU_A", "TNonNNU_A", "T_ANNU", "T_ANonNNU"):  # lossless: only case changes
        out = run(real, code)
        assert (out.title + out.abstract).lower() == (TITLE + real["abstract"].text).lower()
    assert run(table7, "TNonNNU_A").title == "Source Code Embeddings FROM Language Models"
    assert run(table7, "T_ANNU").abstract.startswith("Contextual EMBEDDINGS are common in NLP.")
    assert run(table7, "T_ANonNNU").abstract.startswith("CONTEXTUAL embeddings ARE COMMON IN")


def test_whitespace_inflation(real: dict) -> None:
    out = run(real, "T_A_WS")
    runs = re.findall(r" +", out.abstract)
    assert sum(len(r) > 1 for r in runs) == len(real["abstract"].text.split(" ")) // 2
    assert all(len(r) <= 5 for r in runs)
    assert out.abstract.split() == real["abstract"].text.split()  # nothing else changed
    assert " ".join(out.title.split()) == TITLE


# -- languages -------------------------------------------------------------------------------

def test_french_is_tagged_and_has_no_antonyms() -> None:
    title, abstract = tag(["Analyse syntaxique du français : des constituants aux dépendances",
                           "Cet article présente une technique d'analyse syntaxique statistique. "
                           "L'analyse procède en ajoutant des étiquettes fonctionnelles."], "fr")
    res = Resources(antonyms=load_antonyms("fr"))
    out = apply(NEIGHBOURS["TDelNN_A"], title, abstract, "x", 0, res)
    assert out.title == "syntaxique du : des aux"  # "syntaxique" is an adjective
    assert apply(NEIGHBOURS["T_ARepADJ"], title, abstract, "x", 0, res).status == "skipped"


def test_a_language_without_tagger_gets_the_untagged_neighbours() -> None:
    title, abstract = tag(["Análise de dados", "Uma frase curta. Outra frase aqui. E mais uma."],
                          "pt")
    statuses = {code: apply(n, title, abstract, "x").status for code, n in NEIGHBOURS.items()}
    untagged = {code for code, n in NEIGHBOURS.items() if "tags" not in n.needs}
    assert {c for c, s in statuses.items() if s != "skipped"} == untagged
    assert statuses["T_ARot"] == "ok" and statuses["T_A_WS"] == "ok"


def test_a_neighbour_that_leaves_nothing_is_empty() -> None:
    title, abstract = tag(["Embeddings", "Models."], "en")
    assert apply(NEIGHBOURS["TDelNN"], title, abstract, "x").status == "empty"
