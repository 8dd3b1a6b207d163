"""A tiny SentenceTransformer for training tests: a 2-layer, 64-wide BERT with a 2,000-word
WordPiece vocabulary trained on TALN's abstracts (random weights: tests train it, they do not
judge its quality)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules as models
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, trainers
    from tokenizers import models as tok_models
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    from tests.conftest import SHARED_DATA

    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    texts = []
    with open(SHARED_DATA / "taln" / "papers.jsonl", "rb") as lines:
        for line in lines:
            record = orjson.loads(line)
            texts.append(f"{record.get('title') or ''} {record.get('abstract') or ''}")
    tokenizer = Tokenizer(tok_models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.train_from_iterator(texts, trainers.WordPieceTrainer(
        vocab_size=2000, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
    root = tmp_path_factory.mktemp("tiny")
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]",
                                   pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]",
                                   mask_token="[MASK]")
    fast.save_pretrained(root / "hf")
    config = BertConfig(vocab_size=fast.vocab_size, hidden_size=64, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=128,
                        max_position_embeddings=128)
    BertModel(config).save_pretrained(root / "hf")
    transformer = models.Transformer(str(root / "hf"))
    model = SentenceTransformer(modules=[transformer, models.Pooling(64, "mean"),
                                         models.Normalize()])
    model.max_seq_length = 64
    model.save(str(root / "model"))
    return root / "model"
