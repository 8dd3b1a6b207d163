"""A paper's same-topic papers in other languages are not buried under papers whose only
evidence is one shared reference (a corpus shaped as OpenAlex serves it, the default ranker)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from openmsd.cli import app

TOPIC = {
    "fr": ("Stratégies de lutte antivectorielle contre la dengue",
           "La dengue est transmise par le moustique Aedes aegypti. Nous évaluons les "
           "stratégies de lutte antivectorielle : élimination des gîtes larvaires, "
           "insecticides et mobilisation communautaire dans les villes tropicales."),
    "pt": ("Estratégias de controle vetorial da dengue",
           "A dengue é transmitida pelo mosquito Aedes aegypti. Avaliamos estratégias de "
           "controle vetorial: eliminação de criadouros de larvas, inseticidas e mobilização "
           "comunitária nas cidades tropicais."),
    "es": ("Estrategias de control vectorial del dengue",
           "El dengue es transmitido por el mosquito Aedes aegypti. Evaluamos estrategias de "
           "control vectorial: eliminación de criaderos de larvas, insecticidas y "
           "movilización comunitaria en las ciudades tropicales."),
}
ELSEWHERE = [
    ("Graph algorithms for shortest paths in road networks",
     "We compare Dijkstra's algorithm, contraction hierarchies and hub labels on large road "
     "networks and report query times and memory."),
    ("Protein folding with coarse-grained molecular dynamics",
     "Coarse-grained force fields let molecular dynamics reach the folding times of small "
     "proteins; we validate them against experimental structures."),
    ("Monetary policy and inflation expectations in small open economies",
     "We estimate how central bank announcements move inflation expectations with survey "
     "data from twelve small open economies."),
    ("Deep learning for galaxy morphology classification",
     "Convolutional networks classify galaxy images from sky surveys into morphological "
     "types with accuracy close to expert volunteers."),
    ("Soil carbon storage under no-till agriculture",
     "A meta-analysis of field trials shows how no-till farming changes soil organic carbon "
     "in the top layers and below."),
    ("Formal verification of distributed consensus protocols",
     "We model Raft and Paxos in a proof assistant and verify safety under message loss and "
     "reordering."),
    ("Medieval manuscripts and the spread of literacy",
     "Counting surviving manuscripts by region and century, we trace how reading spread "
     "among merchants in medieval Europe."),
    ("Battery degradation in electric vehicles",
     "Fleet data from electric vehicles show how temperature and fast charging age lithium "
     "ion cells over five years."),
]


def inverted(text: str) -> dict[str, list[int]]:
    """An abstract as OpenAlex's ``abstract_inverted_index``."""
    index: dict[str, list[int]] = {}
    for position, word in enumerate(text.split()):
        index.setdefault(word, []).append(position)
    return index


def work(number: int, title: str, abstract: str, language: str, references: list[str]
         ) -> dict:
    """An OpenAlex Work with the fields the documentation describes."""
    return {"id": f"https://openalex.org/W{number}", "doi": f"https://doi.org/10.5555/{number}",
            "display_name": title, "title": title, "publication_year": 2020,
            "language": language, "type": "article",
            "ids": {"openalex": f"https://openalex.org/W{number}"},
            "authorships": [{"author": {"id": f"https://openalex.org/A{number}",
                                        "display_name": f"Author {number}"}}],
            "abstract_inverted_index": inverted(abstract),
            "referenced_works": references}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """The French paper cites eight works outside the corpus; each paper on another topic
    cites one of them; the Portuguese and Spanish papers on its topic cite none of them."""
    work_dir = tmp_path_factory.mktemp("crosslingual")
    outside = [f"https://openalex.org/W9{n:03d}" for n in range(len(ELSEWHERE))]
    works = [work(1, *TOPIC["fr"], "fr", outside), work(2, *TOPIC["pt"], "pt", []),
             work(3, *TOPIC["es"], "es", [])]
    works += [work(10 + i, title, abstract, "en", [outside[i]])
              for i, (title, abstract) in enumerate(ELSEWHERE)]
    source = work_dir / "works.jsonl"
    source.write_text("".join(json.dumps(w) + "\n" for w in works))
    root = work_dir / "corpus"
    runner = CliRunner()
    for args in (["ingest", str(source), "--out", str(root)],
                 ["embed", str(root), "--model", "muse-v3"]):
        run = runner.invoke(app, args)
        assert run.exit_code == 0, run.output
    return root


def test_same_topic_papers_in_other_languages_come_first(corpus):
    run = CliRunner().invoke(app, ["related", str(corpus), "openalex:W1", "-k", "5", "--json"])
    assert run.exit_code == 0, run.output
    found = json.loads(run.stdout)
    results = found["results"] if isinstance(found, dict) else found
    ids = [r["paper_id"] for r in results]
    languages = [r["language"] for r in results]
    # the Portuguese and Spanish papers on the topic lead, above every paper whose only tie
    # to the query is one shared reference
    assert set(languages[:2]) == {"pt", "es"}, results
    shared_only = [i for i, r in enumerate(results) if r["language"] == "en"]
    assert all(i > 1 for i in shared_only)
    assert any("shared reference" in "; ".join(r["why"]) for r in results[2:]), ids
