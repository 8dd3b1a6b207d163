"""The collapse of the first MP-BERT4CR runs, and its fix: on a synthetic task the cosine-distance
hinge loss falls and positives separate from negatives under cosine, the ranking geometry; and
(slow) a few hundred steps on real unarXive data do not lower dev Recall@10."""

from __future__ import annotations

import pytest
import torch

from openmsd.train.citrec.losses import LOSSES, ContrastiveLoss


def _task(seed: int = 0) -> tuple[torch.Tensor, ...]:
    """Twenty topics; a 'context', its cited 'paper' and a co-cited one are noisy views of a
    topic centre sharing one large common offset (as sentence-encoder vectors do: unrelated
    texts at cosine ~0.8)."""
    g = torch.Generator().manual_seed(seed)
    centres = torch.randn(20, 16, generator=g)
    offset = 4 * torch.randn(16, generator=g)
    return tuple(centres + offset + 0.8 * torch.randn(20, 16, generator=g) for _ in range(3))


def _gap(source: torch.Tensor, papers: torch.Tensor) -> float:
    """Mean cosine to the own paper minus the mean cosine to the others."""
    cos = torch.nn.functional.normalize(source, dim=-1) @ torch.nn.functional.normalize(
        papers, dim=-1).T
    own = cos.diag().mean()
    others = (cos.sum() - cos.diag().sum()) / (cos.numel() - len(cos))
    return float(own - others)


def _heads() -> tuple[torch.nn.Module, torch.nn.Module, torch.optim.Optimizer]:
    """Seeded manuscript and citation heads (LayerNorm + linear) and one optimiser for both."""
    torch.manual_seed(0)
    torch.set_num_threads(1)
    manuscript = torch.nn.Sequential(torch.nn.LayerNorm(16), torch.nn.Linear(16, 16))
    citation = torch.nn.Sequential(torch.nn.LayerNorm(16), torch.nn.Linear(16, 16))
    optimizer = torch.optim.AdamW([*manuscript.parameters(), *citation.parameters()], lr=1e-2)
    return manuscript, citation, optimizer


def _learn(step) -> tuple[list[float], float, float, float]:
    """200 seeded steps of ``step(manuscript, citation, contexts, papers, cocited, g)`` (a
    batch's loss) on the synthetic task: the losses, the cosine gap before and after, and the
    share of contexts whose nearest paper under cosine is their own."""
    manuscript, citation, optimizer = _heads()
    contexts, papers, cocited = _task()
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        start_gap = _gap(manuscript(contexts), citation(papers))
    losses = []
    for _ in range(200):
        loss = step(manuscript, citation, contexts, papers, cocited, g)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with torch.no_grad():
        s, p = manuscript(contexts), citation(papers)
    cos = torch.nn.functional.normalize(s, dim=-1) @ torch.nn.functional.normalize(p, dim=-1).T
    return losses, start_gap, _gap(s, p), float((cos.argmax(dim=1) == torch.arange(20)).float()
                                                 .mean())


@pytest.mark.parametrize("loss_name", sorted(LOSSES))
def test_cosine_hinge_learns_and_separates(loss_name: str) -> None:
    loss_fn = LOSSES[loss_name](0.2, "cosine")

    def step(manuscript, citation, contexts, papers, cocited, g):
        i = torch.randint(0, 20, (8,), generator=g)
        negatives = (i[:, None] + torch.randint(1, 20, (8, 4), generator=g)) % 20
        s, p = manuscript(contexts[i]), citation(papers)
        return loss_fn(s, p[i], citation(cocited[i])[:, None], p[negatives])

    losses, start_gap, gap, own = _learn(step)
    first, last = sum(losses[:20]) / 20, sum(losses[-20:]) / 20
    assert last < 0.5 * first
    assert gap > start_gap + 0.1
    # each context's own paper is its nearest one under cosine for most topics
    assert own >= 0.8


def test_in_batch_contrastive_learns_and_separates() -> None:
    """The InfoNCE over a batch's documents (targets, co-cited positives, sampled negatives;
    other rows' targets are in-batch negatives) on the same synthetic task: the loss falls, the
    cosine gap grows and each context finds its own paper."""
    loss_fn = ContrastiveLoss(temperature=0.1)

    def step(manuscript, citation, contexts, papers, cocited, g):
        i = torch.randperm(20, generator=g)[:8]
        negatives = ((i[:, None] + torch.randint(1, 20, (8, 2), generator=g)) % 20).flatten()
        topics = torch.cat([i, i, negatives])  # the topic of each document
        documents = citation(torch.cat([papers[i], cocited[i], papers[negatives]]))
        positive = topics[None, :] == i[:, None]
        return loss_fn(manuscript(contexts[i]), documents, positive)

    losses, start_gap, gap, own = _learn(step)
    assert sum(losses[-20:]) / 20 < 0.5 * sum(losses[:20]) / 20
    assert gap > start_gap + 0.1
    assert own >= 0.8


def test_contrastive_ignores_what_the_location_also_cites() -> None:
    """A paper the location also cites (``ignore``) is no negative: the loss is that of the
    batch without it; a row without a positive is refused."""
    s = torch.tensor([[1.0, 0.0]])
    documents = torch.tensor([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]])
    loss = ContrastiveLoss(temperature=0.5)
    positive = torch.tensor([[True, False, False]])
    ignored = loss(s, documents, positive, torch.tensor([[False, True, False]]))
    assert ignored.item() == pytest.approx(loss(s, documents[[0, 2]],
                                                torch.tensor([[True, False]])).item())
    assert ignored < loss(s, documents, positive)
    with pytest.raises(ValueError, match="positive"):
        loss(s, documents, torch.zeros(1, 3, dtype=torch.bool))


def test_unknown_distance_is_refused() -> None:
    with pytest.raises(ValueError, match="distance"):
        LOSSES["triplet"](0.2, "manhattan")


@pytest.mark.slow
def test_a_few_hundred_steps_on_unarxive_do_not_lower_dev_recall(tiny_model, unarxive_corpus,
                                                                 tmp_path) -> None:
    """300 steps on three real unarXive papers: the saved model is the best on dev, start
    included, and really has that dev recall when loaded again."""
    from pathlib import Path

    from openmsd.corpus import Corpus
    from openmsd.experiment import train_model
    from openmsd.models import CitrecModel
    from openmsd.rank import PaperContexts, candidate_mask, load_citrec, recall_at, split_locations
    from openmsd.train import CitrecConfig
    from openmsd.train.citrec.train import citrec_scores

    config = CitrecConfig(corpus=str(unarxive_corpus), out=str(tmp_path / "m"),
                          base=str(tiny_model), outside_references=True, max_steps=300,
                          eval_every=50, manuscript_supplemental=3, citation_supplemental=2,
                          max_seq_length=32, seed=3)
    manifest = train_model(config, progress=False)
    history = [h["dev_recall@10"] for h in manifest["metrics"]["dev_history"]]
    assert len(history) == 7  # the start, then every 50 steps
    best = manifest["metrics"]["best_dev_recall@10"]
    assert best == max(history) >= history[0]
    data = load_citrec(Corpus(unarxive_corpus), outside=True)
    learn, _, _ = split_locations(data, config.test_fraction, config.seed)
    _, dev, _ = split_locations(data, config.dev_fraction, config.seed, locations=learn)
    candidates = sorted(data.papers)
    model = CitrecModel.load(Path(config.out))
    scores = citrec_scores(model, dev, candidates, PaperContexts(data.papers),
                           candidate_mask(data, dev, candidates, "random"))
    assert recall_at(scores, dev, candidates) == pytest.approx(best, abs=1e-4)
