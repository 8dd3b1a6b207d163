"""Training throughput: ``openmsd train mspt`` against a plain sentence-transformers ``fit``.

Both train ``e5-small-multilingual`` on the same mSpt examples of a corpus (DC positives with
Specter negatives: anchor, positive, negative), with the same loss (equation 1: in-batch
negatives, dot product, scale 1/0.05), batch size and input length, for the same number of
steps. openmsd's figure is its trainer's loop alone (``train_seconds`` in
``openmsd_train.json``: the dev evaluations before and after are not counted; no evaluation
runs inside the timed steps); the peer is ``SentenceTransformer.fit`` on a ``DataLoader`` of
``InputExample``s, the API most users know. Examples/s and the ratio, same run.

    python benchmarks/training_throughput.py taln --steps 10 --batch-size 32
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from openmsd.corpus.store import Corpus
from openmsd.experiment import train_model
from openmsd.train.config import TrainConfig
from openmsd.train.data import relation_examples
from openmsd.train.recipes import load_base, make_loss


def peer(config: TrainConfig) -> float:
    """Seconds for ``config.max_steps`` steps of ``SentenceTransformer.fit``."""
    from sentence_transformers import InputExample
    from torch.utils.data import DataLoader

    model = load_base(config)
    prefix = model.prompts.get("passage", "")
    table = relation_examples(Corpus(config.corpus), config.positives,
                              seed=config.seed).table
    examples = [InputExample(texts=[prefix + a, prefix + p, prefix + n]) for a, p, n in
                zip(table["anchor"].to_pylist(), table["positive"].to_pylist(),
                    table["negative"].to_pylist(), strict=True)]
    loader = DataLoader(examples, shuffle=True, batch_size=config.batch_size)
    start = time.perf_counter()
    model.fit(train_objectives=[(loader, make_loss(config, model))], epochs=1,
              steps_per_epoch=config.max_steps, warmup_steps=config.warmup_steps,
              show_progress_bar=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", help="a corpus with relations (openmsd relations)")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-seq-length", type=int, default=256)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = TrainConfig(recipe="mspt", corpus=args.corpus, out=f"{tmp}/m",
                             batch_size=args.batch_size, max_steps=args.steps,
                             eval_steps=args.steps + 1, warmup_steps=1,
                             max_seq_length=args.max_seq_length)
        load = os.getloadavg()[0]
        ours = train_model(config)["metrics"]["train_seconds"]
        theirs = peer(config)
    examples = args.steps * args.batch_size
    print(f"e5-small-multilingual, mSpt DC + Specter negatives (3 texts an example), batch "
          f"{args.batch_size}, {args.max_seq_length} tokens, {args.steps} steps, load "
          f"{load:.1f} → {os.getloadavg()[0]:.1f}")
    print(f"openmsd train: {examples / ours:.2f} examples/s ({ours:.1f} s)")
    print(f"sentence-transformers fit (peer): {examples / theirs:.2f} examples/s "
          f"({theirs:.1f} s)")
    print(f"ratio openmsd / peer: {theirs / ours:.2f}")


if __name__ == "__main__":
    main()
