"""``recommend``'s rerank scores every location's own sentence with fewer encoder calls: the
sentences of one token count encoded together (no padding) give the vectors one call a
sentence gives, bit for bit on one thread, so the scores (and the ranked lists) do not move.
On more threads a BLAS may split a small product otherwise (this tiny model on two threads: 2
of 100 vectors 3e-8 apart; e5 on two threads: 120 of 120 titles equal): the tests run the
encoder on one thread, as ``openmsd serve`` and the benchmarks do."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import orjson
import pytest
import torch

from openmsd.corpus import identify
from openmsd.models import alike_groups
from openmsd.models.encoder import SentenceTransformerEncoder
from openmsd.rank import DenseScorer, Papers, Queries, load_scorer, pool_scores
from tests.conftest import SHARED_DATA


def _taln(n: int) -> list[dict]:
    records = []
    with open(SHARED_DATA / "taln" / "papers.jsonl", "rb") as lines:
        for line in lines:
            record = orjson.loads(line)
            if record.get("title") and record.get("abstract"):
                records.append(record)
            if len(records) == n:
                break
    return records


class Counted:
    """An encoder that counts its calls (and passes ``token_counts`` on)."""

    def __init__(self, inner: SentenceTransformerEncoder):
        self.inner, self.name, self.dim, self.calls = inner, inner.name, inner.dim, 0
        self.token_counts = inner.token_counts

    def encode(self, texts, kind="passage", batch_size=32):
        self.calls += 1
        return self.inner.encode(texts, kind, batch_size)


@pytest.fixture
def one_thread() -> Iterator[None]:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.usefixtures("one_thread")
def test_texts_of_one_token_count_encode_as_each_alone(tiny_model) -> None:
    encoder = SentenceTransformerEncoder(tiny_model, "tiny", query_prefix="query: ")
    records = _taln(80)
    # titles (short, many of one length) and abstracts (past the 64 tokens the model reads)
    texts = [r["title"] for r in records] + [r["abstract"] for r in records[:20]]
    counts = encoder.token_counts(texts, "query")
    assert counts[-1] == 64 and min(counts) < 20  # cut at the model's maximum, as encode cuts
    groups = alike_groups(encoder, texts, "query")
    assert sorted(i for g in groups for i in g) == list(range(len(texts)))
    assert all(len({counts[i] for i in g}) == 1 for g in groups)
    assert len(groups) < len(texts) / 2
    alone = np.vstack([encoder.encode([t], "query") for t in texts])
    grouped = np.zeros_like(alone)
    for group in groups:
        grouped[group] = encoder.encode([texts[i] for i in group], "query")
    assert np.array_equal(grouped, alone)  # bit for bit


@pytest.mark.usefixtures("one_thread")
def test_pool_scores_are_one_score_call_a_sentence(tiny_model) -> None:
    records = _taln(300)
    texts = [f"{r['title']} {r['abstract']}" for r in records]
    papers = Papers([r["id"] for r in records], texts, [lang for lang, _ in identify(texts)])
    encoder = Counted(SentenceTransformerEncoder(tiny_model, "tiny", query_prefix="query: "))
    dense = DenseScorer.from_texts(papers, encoder, "tiny")
    bm25 = load_scorer("bm25", papers)
    sentences = [s for r in records[:15] for s in r["abstract"].split(". ") if s][:40]
    rng = np.random.default_rng(0)
    prefetched = [[papers.ids[j] for j in rng.choice(len(papers), 50, replace=False)]
                  for _ in sentences]
    prefetched[3] = []  # a location nothing was prefetched for
    for scorer in (dense, bm25):
        encoder.calls = 0
        found = pool_scores(scorer, Queries.of_texts(sentences), prefetched)
        calls = encoder.calls
        for i, (sentence, ids) in enumerate(zip(sentences, prefetched, strict=True)):
            pool = np.array([papers.position[p] for p in ids], np.int64)
            one = scorer.score(Queries.of_texts([sentence]), pool)[0]
            assert np.array_equal(np.asarray(found[i], float), np.asarray(one, float)), i
        if scorer is dense:
            assert 0 < calls < len(sentences)  # a call per token count, not per sentence
