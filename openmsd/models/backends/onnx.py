"""Fast CPU inference: a SentenceTransformer directory run by ONNX Runtime.

:func:`build_onnx` loads a SentenceTransformer directory (Transformer → mean Pooling →
optional Normalize), exports its transformer with ``torch.onnx.export`` (the TorchScript
exporter, dynamic batch and sequence axes), checks the export against PyTorch on a padded batch,
and builds one of four precisions from it:

* ``sq8``: int8 matrix products, each token's activations quantised on its own after
  SmoothQuant, calibrated on the shipped sample's abstracts (:mod:`.smoothquant`);
* ``qint8``: ONNX Runtime's dynamic int8 quantisation: ``MatMul`` weights per output channel
  (per-tensor scales cost fidelity: mean cosine 0.988 instead of 0.997 on e5), activations
  quantised to uint8 at run time with one scale per batch. On x86 CPUs without VNNI, int8
  weights use 7 bits (``reduce_range``) to avoid the saturation of the AVX2 u8×s8
  instructions; VNNI and ARM CPUs use all 8;
* ``q4``: 4-bit ``MatMulNBits`` weights (:mod:`.nbits`);
* ``fp32``: the export as it is.

All but ``fp32`` store the embedding tables (``Gather``) in int8 (4× smaller, at no
measurable cost).

The result is a directory, cached next to the model and built once, atomically (a temporary
sibling renamed into place)::

    <model dir>/onnx/sq8/        (qint8, qint8-avx2 without VNNI, q4, fp32)
        model.onnx  tokenizer.json  tokenizer_config.json  …  openmsd_onnx.json

``openmsd_onnx.json`` records the source files (size, mtime) and the settings (for ``sq8``,
the calibration file's digest too): a model directory changed in place is exported again.
:class:`OnnxEncoder` runs it with ONNX Runtime and the saved tokenizer, without loading the
PyTorch model.

The maintained exporter (``sentence-transformers``' ``backend="onnx"``) needs ``optimum-onnx``,
which requires ``transformers<4.58``. The ``torch.export``-based exporter (which also needs
``onnxscript``) works, but its graph quantises into a model 2.7× slower than the TorchScript
export's (same settings, same load).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import os
import platform
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import numpy as np

from openmsd.io import building_dir, cache_root
from openmsd.models.backends.build import build_stage, ensure_built
from openmsd.models.backends.gpu import plan_batches
from openmsd.models.backends.nbits import BLOCK, to_matmul_nbits
from openmsd.models.backends.smoothquant import (
    ALPHA,
    CALIBRATION,
    GELU_MIN,
    calibration_texts,
    channel_peaks,
    to_smooth_int8,
)
from openmsd.models.backends.tokenizer import SavedTokenizer
from openmsd.models.encoder import Kind, normalise

Precision = Literal["q4", "qint8", "sq8", "fp32"]

BUILD_VERSION = 1
"""Bump when the built directory changes, so that caches are rebuilt."""

Q4_ACCURACY_LEVEL = 4
"""``MatMulNBits``' int8 activations (ONNX Runtime's int8 dot-product kernels)."""
ONNX_DIR = "onnx"
STAMP = "openmsd_onnx.json"
OPSET = 17
_CHECK_TEXTS = ["passage: Nous présentons un analyseur syntaxique robuste.", "query: parsing"]


def cpu_has_vnni() -> bool:
    """Whether this x86 CPU has VNNI (AVX512-VNNI or AVX-VNNI) int8 dot products (Linux only;
    ``False`` where ``/proc/cpuinfo`` cannot be read)."""
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return "avx512_vnni" in flags or "avx_vnni" in flags


def reduce_range() -> bool:
    """7-bit int8 weights on x86 CPUs without VNNI (ONNX Runtime's advice), 8 bits elsewhere."""
    is_arm = platform.machine().lower() in ("arm64", "aarch64")
    return not is_arm and not cpu_has_vnni()


def variant_name(precision: Precision) -> str:
    """The cached directory name of a precision on this CPU: ``qint8``, ``qint8-avx2``,
    ``sq8``, ``q4``, ``fp32``."""
    if precision in ("fp32", "q4", "sq8"):
        return precision
    if precision == "qint8":
        return "qint8-avx2" if reduce_range() else "qint8"
    raise ValueError(f"unknown ONNX precision {precision!r}: expected 'q4', 'qint8', 'sq8' or "
                     "'fp32'")


def default_onnx_cache(model_dir: Path) -> Path:
    """``<model dir>/onnx`` when the model directory is writable, else
    ``<openmsd cache>/onnx/<name>-<hash of its path>``."""
    model_dir = Path(model_dir).resolve()
    if os.access(model_dir, os.W_OK):
        return model_dir / ONNX_DIR
    digest = hashlib.sha256(str(model_dir).encode()).hexdigest()[:10]
    return cache_root() / ONNX_DIR / f"{model_dir.name}-{digest}"


def source_fingerprint(model_dir: Path) -> dict[str, list[int]]:
    """``{relative path: [size, mtime_ns]}`` of the model directory's files, leaving out its
    ``onnx/`` cache and hidden files."""
    model_dir = Path(model_dir)
    files: dict[str, list[int]] = {}
    for path in sorted(model_dir.rglob("*")):
        rel = path.relative_to(model_dir)
        if rel.parts[0] == ONNX_DIR or any(p.startswith(".") for p in rel.parts):
            continue
        if path.is_file():
            stat = path.stat()
            files[rel.as_posix()] = [stat.st_size, stat.st_mtime_ns]
    return files


def _settings(precision: Precision) -> dict[str, Any]:
    """What a build depends on besides the source files."""
    quantization: dict[str, Any] | None = None
    if precision == "q4":
        quantization = {"MatMul": f"MatMulNBits, 4 bits, blocks of {BLOCK}, symmetric",
                        "accuracy_level": Q4_ACCURACY_LEVEL,
                        "Gather": "QInt8 per channel (dynamic)"}
    elif precision == "sq8":
        digest = hashlib.sha256(CALIBRATION.read_bytes()).hexdigest()[:16]
        quantization = {"MatMul": "MatMulIntegerToFloat: int8 weights per column, int8 "
                                  "activations per token after SmoothQuant",
                        "alpha": ALPHA, "gelu_min": GELU_MIN,
                        "calibration": f"{CALIBRATION.name} sha256 {digest}",
                        "Gather": "QInt8 per channel (dynamic)"}
    elif precision == "qint8":
        quantization = {"weight_type": "QInt8", "activations": "QUInt8 (dynamic)",
                        "per_channel": True, "reduce_range": reduce_range(),
                        "op_types": ["MatMul", "Gather"]}
    return {"build_version": BUILD_VERSION, "precision": precision, "opset": OPSET,
            "quantization": quantization}


def _read_stamp(directory: Path) -> dict[str, Any] | None:
    try:
        return json.loads((directory / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def is_current(directory: Path, model_dir: Path, precision: Precision) -> bool:
    """Whether ``directory`` holds a complete build of ``model_dir`` at ``precision`` with the
    current settings and unchanged source files."""
    stamp = _read_stamp(directory)
    return (stamp is not None and (directory / "model.onnx").is_file()
            and stamp.get("settings") == _settings(precision)
            and stamp.get("source") == source_fingerprint(model_dir))


def _load_sentence_transformer(model_dir: Path) -> Any:
    """The SentenceTransformer at ``model_dir`` (eager attention, traceable), after checking that
    it is a Transformer, a mean Pooling and an optional Normalize; ``ValueError`` otherwise."""
    # optional: the models extra (sentence_transformers ~14.1 s, transformers ~1.0 s)
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import (
        Normalize,
        Pooling,
        Transformer,
    )
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # the build shows its own progress
    model = SentenceTransformer(str(model_dir), device="cpu",
                                model_kwargs={"attn_implementation": "eager"})
    modules = list(model)
    pooling_mode = getattr(modules[1], "pooling_mode", None) if len(modules) > 1 else None
    if (len(modules) not in (2, 3) or not isinstance(modules[0], Transformer)
            or not isinstance(modules[1], Pooling) or pooling_mode not in ("mean", ("mean",))
            or (len(modules) == 3 and not isinstance(modules[2], Normalize))):
        raise ValueError(f"{model_dir}: the ONNX path supports Transformer → mean Pooling "
                         f"(→ Normalize) models only, not {[type(m).__name__ for m in modules]}")
    return model.eval()


def _mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of the token vectors ``hidden`` [batch, seq, dim] where ``mask`` [batch, seq] is 1."""
    weights = mask[..., None].astype(np.float32)
    return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)


def _export(model: Any, path: Path) -> None:
    """Write the transformer of the SentenceTransformer ``model`` to ``path`` (float32 ONNX:
    ``input_ids``, ``attention_mask`` → ``last_hidden_state``), then check it against PyTorch."""
    # optional: the models extra (onnxruntime ~0.2 s, torch ~2.8 s)
    import onnxruntime as ort
    import torch

    class _Hidden(torch.nn.Module):
        def __init__(self, transformer: torch.nn.Module) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            return self.transformer(input_ids=input_ids,
                                    attention_mask=attention_mask).last_hidden_state

    # a padded batch, so that the traced graph takes the general masking path
    features = model.tokenizer(_CHECK_TEXTS, padding=True, truncation=True, return_tensors="pt")
    args = (features["input_ids"], features["attention_mask"])
    dynamic_axes = {name: {0: "batch", 1: "sequence"}
                    for name in ("input_ids", "attention_mask", "last_hidden_state")}
    wrapper = _Hidden(model[0].auto_model).eval()
    with warnings.catch_warnings(), torch.no_grad():
        # the TorchScript exporter is deprecated and its tracer warns about Python branches:
        # the check below is what tells whether the graph is right
        warnings.simplefilter("ignore")
        torch.onnx.export(wrapper, args, str(path), input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state"], dynamic_axes=dynamic_axes,
                          opset_version=OPSET, dynamo=False)
        expected = wrapper(*args).numpy()
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = session.run(None, {"input_ids": args[0].numpy(), "attention_mask": args[1].numpy()})[0]
    mask = args[1].numpy()
    error = np.abs(_mean_pool(got, mask) - _mean_pool(expected, mask)).max()
    if error > 1e-3:
        raise RuntimeError(f"ONNX export of {path} differs from PyTorch by {error:.2g}")


def _quantize(source: Path, target: Path, op_types: Sequence[str] | None = None) -> None:
    """Dynamic int8 quantisation of the float32 ONNX model ``source`` into ``target`` (of
    ``op_types``; default: the ``qint8`` settings' ``MatMul`` and ``Gather``)."""
    # optional: the models extra; onnxruntime takes ~0.2 s to import
    from onnxruntime.quantization import QuantType, quantize_dynamic

    settings = _settings("qint8")["quantization"]
    # it logs advice to pre-process on the root logger, which would call basicConfig()
    root, quiet = logging.getLogger(), logging.NullHandler()
    level = root.level
    root.addHandler(quiet)
    root.setLevel(logging.ERROR)
    try:
        quantize_dynamic(source, target, weight_type=QuantType.QInt8,
                         per_channel=settings["per_channel"],
                         reduce_range=settings["reduce_range"],
                         op_types_to_quantize=list(op_types or settings["op_types"]),
                         extra_options={"MatMulConstBOnly": True})
    finally:
        root.setLevel(level)
        root.removeHandler(quiet)


def _write_build(model_dir: Path, root: Path, precision: Precision) -> None:
    """Fill the empty directory ``root``: ``model.onnx``, the tokenizer, the stamp."""
    import onnx  # optional: the models extra; onnx takes ~0.3 s to import

    build_stage("loading the model")
    model = _load_sentence_transformer(model_dir)
    build_stage("exporting it to ONNX")
    error = None
    if precision == "fp32":
        _export(model, root / "model.onnx")
    elif precision == "qint8":
        _export(model, root / "model_fp32.onnx")
        _quantize(root / "model_fp32.onnx", root / "model.onnx")
        (root / "model_fp32.onnx").unlink()
    else:  # q4 or sq8: the matrix products rewritten, then the embedding table int8
        _export(model, root / "model_fp32.onnx")
        graph = onnx.load(str(root / "model_fp32.onnx"))
        if precision == "q4":
            build_stage("packing 4-bit weights")
            error = to_matmul_nbits(graph, Q4_ACCURACY_LEVEL)
        else:
            texts = calibration_texts()

            def feed(i: int, text: str) -> Any:
                build_stage(f"calibrating on the sample's abstracts ({i}/{len(texts)})")
                return model.tokenizer([text], truncation=True,
                                       max_length=model.max_seq_length, return_tensors="np")
            feeds = (feed(i, text) for i, text in enumerate(texts, 1))
            error = to_smooth_int8(graph, channel_peaks(graph, (
                {k: f[k].astype(np.int64) for k in ("input_ids", "attention_mask")}
                for f in feeds)))
        build_stage("quantising")
        onnx.save(graph, str(root / "model_products.onnx"))
        del graph
        _quantize(root / "model_products.onnx", root / "model.onnx", ["Gather"])
        (root / "model_fp32.onnx").unlink()
        (root / "model_products.onnx").unlink()
    model.tokenizer.save_pretrained(str(root))
    stamp = {
        "settings": _settings(precision),
        "source": source_fingerprint(model_dir),
        "model_dir": str(Path(model_dir).resolve()),
        "dim": int(model.get_embedding_dimension()
                   if hasattr(model, "get_embedding_dimension")
                   else model.get_sentence_embedding_dimension()),
        "max_seq_length": int(model.max_seq_length),
        "weight_error": error,
        "versions": {dist: importlib.metadata.version(dist)
                     for dist in ("torch", "onnx", "onnxruntime", "transformers")},
    }
    (root / STAMP).write_text(json.dumps(stamp, indent=2) + "\n", encoding="utf-8")


def build_onnx(model_dir: Path, out_dir: Path, precision: Precision = "qint8") -> Path:
    """Export the SentenceTransformer directory ``model_dir`` into ``out_dir`` and return it.

    Writes into a temporary sibling directory renamed to ``out_dir`` at the end (replacing an
    older build), so ``out_dir`` is either absent or complete. Needs torch, sentence-transformers,
    onnx and onnxruntime; for e5-small, about 20 s and 120 MB (qint8), 30 s and 120 MB (sq8),
    or 470 MB (fp32).
    """
    out_dir = Path(out_dir)
    variant_name(precision)  # an unknown precision fails before any work
    with building_dir(out_dir) as tmp:
        _write_build(Path(model_dir), tmp, precision)
    return out_dir


def ensure_onnx(model_dir: Path, precision: Precision = "qint8",
                cache_dir: Path | None = None, what: str | None = None) -> Path:
    """The built ONNX directory of ``model_dir`` at ``precision``, built on first use or when
    the model's files or the build settings changed.

    ``cache_dir`` holds one sub-directory per variant (default :func:`default_onnx_cache`);
    a build is announced as ``what`` (default: the model directory's name and the precision).
    """
    model_dir = Path(model_dir)
    cache = Path(cache_dir) if cache_dir is not None else default_onnx_cache(model_dir)
    directory = cache / variant_name(precision)
    return ensure_built(directory, lambda d: is_current(d, model_dir, precision),
                        lambda target: build_onnx(model_dir, target, precision),
                        what=what or f"building the ONNX Runtime {precision} model of "
                                     f"{model_dir.name} once (about 2 minutes)", seconds=100)


THREADS_ENV = "OPENMSD_THREADS"


def default_threads() -> int:
    """``$OPENMSD_THREADS`` when set (a Spark task's cores), else the CPU cores this process
    may run on."""
    if os.environ.get(THREADS_ENV, "").isdigit():
        return max(1, int(os.environ[THREADS_ENV]))
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def saved_prompts(model_dir: Path) -> dict[str, str]:
    """The ``prompts`` a SentenceTransformer directory saved (``{}`` when none)."""
    config = model_dir / "config_sentence_transformers.json"
    if not config.is_file():
        return {}
    return dict(json.loads(config.read_text(encoding="utf-8")).get("prompts") or {})


def session_options(intra_op_threads: int, optimize: bool = False) -> Any:
    """ONNX Runtime session options: ``intra_op_threads`` threads for one run, one for
    independent nodes, graph optimisations when ``optimize`` (a model already optimised by
    :func:`optimized_model` loads without them)."""
    import onnxruntime as ort  # optional: the models extra; onnxruntime takes ~0.2 s to import

    options = ort.SessionOptions()
    options.intra_op_num_threads = intra_op_threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimize
                                        else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    return options


def _machine_key() -> str:
    """What an optimised graph depends on: ONNX Runtime's version and this CPU's kind and
    instruction sets (its layout transforms are specific to the hardware)."""
    import onnxruntime as ort  # optional: the models extra; onnxruntime takes ~0.2 s to import

    try:
        cpu = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        flags = next((line for line in cpu.splitlines() if line.startswith("flags")), "")
    except OSError:
        flags = ""
    text = f"{ort.__version__} {platform.machine()} {platform.processor()} {flags}"
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def optimized_model(directory: Path) -> Path:
    """The build's ``model.onnx`` with ONNX Runtime's graph optimisations applied, saved beside
    it once per runtime version and CPU (``model.optimized-KEY.onnx``): loading it skips the
    optimisation a session would otherwise redo in every process. Falls back to
    ``model.onnx`` where the directory cannot be written."""
    import onnxruntime as ort  # optional: the models extra; onnxruntime takes ~0.2 s to import

    target = directory / f"model.optimized-{_machine_key()}.onnx"
    if target.is_file():
        return target
    temporary = directory / f".{target.name}.{os.getpid()}.tmp"
    options = session_options(1, optimize=True)
    options.optimized_model_filepath = str(temporary)
    options.log_severity_level = 3  # the optimised graph is kept on this machine only
    try:
        ort.InferenceSession(str(directory / "model.onnx"), options,
                             providers=["CPUExecutionProvider"])
        os.replace(temporary, target)
    except Exception:  # a read-only cache, a full disk: optimise in each process instead
        temporary.unlink(missing_ok=True)
        return directory / "model.onnx"
    return target


TOKENS_PER_ROW = 128
"""A batch holds ``batch_size * TOKENS_PER_ROW`` tokens, padding included: many short texts
or a few long ones (texts sorted by length, so little of it is padding)."""


class OnnxEncoder:
    """A SentenceTransformer directory run by ONNX Runtime (a :class:`DenseEncoder`).

    Same tokenizer, truncation, mean pooling and L2 normalisation as the PyTorch model, and the
    same ``query_prefix`` / ``passage_prefix`` as :class:`SentenceTransformerEncoder`. The ONNX
    model is built on first use (:func:`ensure_onnx`).

    ``threads`` (default: the cores, or ``$OPENMSD_THREADS``) batches run at once, each on one
    thread of its own: one session, one intra-op thread, ``run`` called from ``threads`` Python
    threads (ONNX Runtime releases the GIL). Two one-thread runs do more per CPU-second than
    one run on two intra-op threads, and the weights are loaded once. A batch's vectors do not
    depend on which thread ran it: one thread gives the same bits as several.
    """

    def __init__(self, model_dir: str | Path, name: str | None = None, *,
                 query_prefix: str = "", passage_prefix: str = "",
                 precision: Precision = "qint8", cache_dir: Path | None = None,
                 threads: int | None = None, intra_op_threads: int = 1,
                 announce: str | None = None):
        import onnxruntime as ort  # optional: the models extra; onnxruntime takes ~0.2 s to import

        self.directory = ensure_onnx(Path(model_dir), precision, cache_dir, announce)
        stamp = _read_stamp(self.directory) or {}
        self.name = name or str(model_dir)
        self.dim = int(stamp["dim"])
        self.max_length = int(stamp["max_seq_length"])
        self.precision = precision
        self.threads = threads or default_threads()
        prompts = saved_prompts(Path(model_dir))  # a directory written by ``openmsd train``
        self.prefixes = {"query": query_prefix or prompts.get("query", ""),
                         "passage": passage_prefix or prompts.get("passage", "")}
        self.tokenizer = SavedTokenizer(self.directory, self.max_length)
        self.pad_id = self.tokenizer.pad_id
        model = optimized_model(self.directory)
        self.session = ort.InferenceSession(
            str(model), session_options(intra_op_threads, optimize=model.name == "model.onnx"),
            providers=["CPUExecutionProvider"])

    def _run(self, ids: list[list[int]], rows: np.ndarray) -> np.ndarray:
        """The mean-pooled (not normalised) vectors of the token lists ``ids[rows]``."""
        width = max(len(ids[i]) for i in rows)
        input_ids = np.full((len(rows), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for row, i in enumerate(rows):
            input_ids[row, :len(ids[i])] = ids[i]
            mask[row, :len(ids[i])] = 1
        hidden = self.session.run(None, {"input_ids": input_ids, "attention_mask": mask})[0]
        return _mean_pool(hidden, mask)

    def encode(self, texts: Sequence[str], kind: Kind = "passage",
               batch_size: int = 32) -> np.ndarray:
        """One L2-normalised float32 row per text; texts sorted by token count, in batches of
        ``batch_size * TOKENS_PER_ROW`` tokens, :attr:`threads` batches at once."""
        prefix = self.prefixes[kind]
        out = np.zeros((len(texts), self.dim), np.float32)
        if not len(texts):
            return out
        ids = self.tokenizer.encode([prefix + t for t in texts])
        batches = plan_batches([len(row) for row in ids], batch_size * TOKENS_PER_ROW,
                               max_rows=len(ids))
        if self.threads == 1 or len(batches) == 1:
            for rows in batches:
                out[rows] = self._run(ids, rows)
        else:
            with ThreadPoolExecutor(min(self.threads, len(batches))) as pool:
                for rows, vectors in zip(batches, pool.map(lambda r: self._run(ids, r), batches),
                                         strict=True):
                    out[rows] = vectors
        return normalise(out)
