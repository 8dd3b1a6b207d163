"""``recommend``'s first stage learned from citation contexts (``train citrec-prefetch``): kept
only where it beats the untrained model out of fold, used by ``recommend``, refused in one line
when its file is damaged."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from typer.testing import CliRunner

from openmsd.artifact import ArtifactError
from openmsd.corpus import Corpus
from openmsd.index import build_index
from openmsd.models import embed_corpus, load_model, load_vector_table
from openmsd.rank import (
    CitrecData,
    Location,
    PrefetchHead,
    prefetch_head_path,
    read_prefetch_head,
    write_prefetch_head,
)
from openmsd.search import CitationRequest, recommend_citations
from openmsd.train import (
    PrefetchConfig,
    PrefetchTask,
    prefetch_task,
    select_head,
    train_prefetch_head,
)
from openmsd.vectors import vectors_dir, write_part

CONFIG = PrefetchConfig(folds=4, pulls=(0.01, 1.0), epochs=40, batch_size=32)


def _task(signal: float, seed: int = 0, papers: int = 12, per_paper: int = 20,
          dim: int = 16) -> PrefetchTask:
    """Contexts whose vectors are a fixed rotation of their cited paper's (``signal``) plus
    noise: a head can learn the rotation back; ``signal`` 0: pure noise, nothing to learn."""
    rng = np.random.default_rng(seed)
    candidates = rng.normal(size=(60, dim)).astype(np.float32)
    candidates /= np.linalg.norm(candidates, axis=1, keepdims=True)
    rotation, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    ids = [f"c{j:02d}" for j in range(len(candidates))]
    locations, queries = [], []
    for p in range(papers):
        for _ in range(per_paper):
            target = int(rng.integers(len(candidates)))
            locations.append(Location(f"p{p}", ["a", "b", "c"], 1, [ids[target]]))
            queries.append(signal * rotation @ candidates[target] + rng.normal(size=dim))
    queries = np.asarray(queries, np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    data = CitrecData(locations, {p: (p, None) for p in ids}, {})
    return PrefetchTask("m", data, ids, queries, candidates,
                        np.ones((len(locations), len(ids)), bool),
                        [loc.citing_id for loc in locations])


def test_a_head_that_wins_out_of_fold_is_kept_and_ranks_held_out_papers_better() -> None:
    task = _task(signal=4.0)
    rows = np.arange(len(task.citing))
    train, held = rows[:180], rows[180:]  # the last three citing papers never seen
    chosen = select_head(task, train, CONFIG)
    table = chosen["out_of_fold"]
    assert chosen["kept"] and table[chosen["chosen"]]["Recall@10"] > table["untrained"][
        "Recall@10"]
    learned = task.recalls(held, chosen["weight"], (10,))["Recall@10"]
    assert learned > task.recalls(held, None, (10,))["Recall@10"] + 0.2


def test_a_head_that_does_not_win_out_of_fold_is_refused() -> None:
    chosen = select_head(_task(signal=0.0), np.arange(240), CONFIG)
    assert not chosen["kept"] and "weight" not in chosen
    assert "does not beat the untrained model" in chosen["why"]


def test_train_citrec_prefetch_on_a_corpus_and_recommend_uses_it(
        tiny_model, unarxive_corpus, tmp_path) -> None:
    corpus = Corpus(shutil.copytree(unarxive_corpus, tmp_path / "corpus"))
    model = str(tiny_model)
    encoder = load_model(model)
    embed_corpus(corpus, encoder, model)
    build_index(corpus, model)
    report = train_prefetch_head(corpus, PrefetchConfig(model=model, folds=3, epochs=10))
    table = report["out_of_fold"]
    wins = table[report["chosen"]]["Recall@10"] > table["untrained"]["Recall@10"]
    assert report["kept"] == wins and report["citing_papers"] == 3
    assert prefetch_head_path(corpus).is_file() == wins
    # recommend's dense first stage goes through a stored head (one is written here either way)
    dim = np.asarray(encoder.encode(["x"], "query")).shape[1]
    head = PrefetchHead(model, np.eye(dim, dtype=np.float32)[::-1].copy(), {})
    text = ("Random polynomials have many zeros. Their zeros lie near the unit circle. "
            "This was conjectured by Pemantle and Rivin {{cite:b9}}. We prove it.")
    request = CitationRequest(text, model, k=3, two_stage=False)
    write_prefetch_head(corpus, head)
    assert read_prefetch_head(corpus).weight.shape == (dim, dim)
    with_head = [(r.paper_id, r.score) for r in recommend_citations(corpus, request,
                                                                   encoder)[0].results]
    prefetch_head_path(corpus).unlink()
    without = [(r.paper_id, r.score) for r in recommend_citations(corpus, request,
                                                                 encoder)[0].results]
    assert with_head != without
    # a damaged head: recommend refuses it in one line naming the file
    from openmsd.cli import app

    path = prefetch_head_path(corpus)
    path.write_bytes(b"not an npz")
    manuscript = tmp_path / "draft.md"
    manuscript.write_text(text + "\n")
    result = CliRunner().invoke(app, ["recommend", str(corpus.root), "--manuscript",
                                      str(manuscript), "--model", model])
    assert result.exit_code != 0 and str(path) in result.output, result.output
    said = [line for line in result.output.splitlines() if str(path) in line]
    assert "Traceback" not in result.output and len(said) == 1 and "error" in said[0]


def test_the_candidates_are_the_corpus_s_stored_vectors_where_their_text_is_current(
        tiny_model, unarxive_corpus, tmp_path) -> None:
    corpus = Corpus(shutil.copytree(unarxive_corpus, tmp_path / "corpus"))
    model = str(tiny_model)
    fresh = prefetch_task(corpus, model)  # no vectors stored: every candidate encoded
    assert fresh.stored == 0
    embed_corpus(corpus, load_model(model), model)
    ids, hashes, _ = load_vector_table(corpus, model)
    task = prefetch_task(corpus, model)
    inside = [p for p in ids if p in set(task.ids)]
    assert task.stored == len(inside) > 0 and task.stored < len(task.ids)  # outside: encoded
    np.testing.assert_allclose(task.candidates, fresh.candidates, atol=1e-5)
    # read, not encoded: a newer part's vector under a paper's current text hash is the one
    # used; one under another hash (a text since changed) is not
    dim = task.candidates.shape[1]
    marked = np.zeros((2, dim), np.float32)
    marked[0, 0] = marked[1, 1] = 3.0
    first = ids.index(inside[0])
    write_part(vectors_dir(corpus, model) / "part-09999.parquet", [inside[0], inside[1]],
               [hashes[first], "0" * 16], marked)
    again = prefetch_task(corpus, model)
    row, other = again.ids.index(inside[0]), again.ids.index(inside[1])
    assert again.candidates[row].tolist() == np.eye(dim, dtype=np.float32)[0].tolist()
    np.testing.assert_allclose(again.candidates[other], fresh.candidates[other], atol=1e-5)


def test_a_damaged_head_is_refused_in_one_line(unarxive_corpus, tmp_path) -> None:
    corpus = Corpus(shutil.copytree(unarxive_corpus, tmp_path / "corpus"))
    path = prefetch_head_path(corpus)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not an npz")
    with pytest.raises(ArtifactError) as error:
        read_prefetch_head(corpus)
    message = str(error.value)
    assert "\n" not in message and str(path) in message
    assert "openmsd train citrec-prefetch" in message
    np.savez(path, weight=np.ones((3, 4), np.float32), meta=np.array('{"model": "m"}'))
    with pytest.raises(ArtifactError, match="field 'weight'"):
        read_prefetch_head(corpus)


def test_a_corpus_without_contexts_keeps_the_untrained_first_stage(tmp_path) -> None:
    from openmsd.cli import app
    from openmsd.ingest import ingest

    source = tmp_path / "papers.jsonl"
    source.write_text('{"id": "a", "title": "Zeros of random polynomials", "abstract": "x"}\n'
                      '{"id": "b", "title": "Roots of derivatives", "abstract": "y"}\n')
    ingest([source], tmp_path / "corpus")
    result = CliRunner().invoke(app, ["train", "citrec-prefetch", str(tmp_path / "corpus")])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "no citation context" in lines[0]
    assert "untrained first stage" in lines[0]
    assert not prefetch_head_path(Corpus(tmp_path / "corpus")).exists()
