"""The SDSM tasks as a sentence-transformers evaluator: dev MAP during training.

Embeds the pool of a split (``dev`` by default) with the model being trained and scores the
three tasks exactly as ``openmsd eval sdsm`` does. Returns ``MAP`` and ``nDCG@10`` (the average
over the tasks with queries, in %) and per-task MAP; ``MAP`` is the primary metric, so the
trainer keeps the checkpoint with the best dev MAP, as OpenMSD does.

    evaluator = SDSMEvaluator(load_pool(Corpus("taln"), "dev"), prompt="passage: ")
    evaluator(model)  # {"dev_MAP": ..., "dev_nDCG@10": ..., "dev_citation_MAP": ...}
"""

from __future__ import annotations

from typing import Any

from sentence_transformers.evaluation import SentenceEvaluator

from openmsd.eval.ranks import DenseScorer
from openmsd.eval.sdsm import TASKS, Pool, model_ranks, score_model


class SDSMEvaluator(SentenceEvaluator):
    """MAP / nDCG@10 of the SDSM tasks on ``pool`` (see :func:`openmsd.eval.sdsm.load_pool`)."""

    def __init__(self, pool: Pool, prompt: str = "", name: str = "dev", batch_size: int = 32):
        super().__init__()
        if pool.judgements.num_rows == 0:
            raise ValueError(f"split {pool.split!r} has no query with a related paper: nothing "
                             "to select checkpoints on")
        self.pool = pool
        self.prompt = prompt
        self.name = name
        self.batch_size = batch_size
        self.primary_metric = "MAP"
        self.greater_is_better = True

    def __call__(self, model: Any, output_path: str | None = None, epoch: int = -1,
                 steps: int = -1) -> dict[str, float]:
        texts = [self.prompt + t for t in self.pool.papers["text"].to_pylist()]
        vectors = model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                               normalize_embeddings=True, show_progress_bar=False)
        figures, _ = score_model(self.pool, model_ranks(self.pool, DenseScorer(vectors,
                                                                                vectors)))
        metrics = {"MAP": figures["average"]["MAP"] or 0.0,
                   "nDCG@10": figures["average"]["nDCG@10"] or 0.0}
        metrics.update({f"{task}_MAP": figures[task]["MAP"] or 0.0 for task in TASKS})
        metrics = self.prefix_name_to_metrics(metrics, self.name)
        self.store_metrics_in_model_card_data(model, metrics, epoch, steps)
        return metrics
