"""The saved tokenizer of a build, quick to start: :class:`SavedTokenizer`.

Loading a unigram ``tokenizer.json`` with XLM-R's 250,002 pieces (e5-small-multilingual's) takes
most of a second, most of a short command's time. A unigram model segments a word with the
pieces that occur in it and nothing else, so a few texts get the same ids from the model
restricted to their pieces. :class:`SavedTokenizer` keeps the vocabulary as sorted arrays beside
the build (``pieces/``, written once), looks the texts' substrings up in them, and builds that
small model in milliseconds. The unknown-piece penalty depends on the vocabulary's lowest score,
so the restricted model keeps that piece too.

Everything else goes through the whole tokenizer, loaded once on first need: a tokenizer that is
not a unigram one, a text that spells a special token, texts longer than :data:`QUICK_CHARS`
together, and every text once a process has tokenized :data:`QUICK_CHARS` characters (a server
soon holds the whole tokenizer).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from openmsd.io import building_dir

QUICK_CHARS = 20_000
"""The most characters tokenized through restricted models before the whole tokenizer loads."""

PIECES_VERSION = 1
"""Bump when the ``pieces/`` layout changes, so that it is rewritten."""


def _source_stamp(path: Path) -> dict[str, int]:
    """What ``pieces/`` was made from: the ``tokenizer.json``'s size and modification time."""
    stat = path.stat()
    return {"version": PIECES_VERSION, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _write_pieces(source: Path, target: Path) -> bool:
    """Write ``target`` (``pieces/``) from the unigram ``tokenizer.json`` ``source``: the pieces
    sorted (``sorted.npy``), their ids in that order (``ids.npy``), every piece's score by id
    (``scores.npy``) and the tokenizer without its vocabulary (``skeleton.json``). Return
    ``False`` (writing nothing) when the tokenizer is not a unigram one, or its post-processor
    one that :class:`_Pieces` cannot renumber."""
    config = json.loads(source.read_text(encoding="utf-8"))
    model = config.get("model") or {}
    post = (config.get("post_processor") or {}).get("type")
    if model.get("type") != "Unigram" or not model.get("vocab") or post not in (
            None, "TemplateProcessing"):
        return False
    pieces = np.array([piece for piece, _ in model["vocab"]])
    scores = np.array([score for _, score in model["vocab"]], dtype=np.float64)
    order = np.argsort(pieces, kind="stable")
    skeleton = {**config, "model": {**model, "vocab": []}}
    meta = {**_source_stamp(source), "longest": int(max(len(p) for p, _ in model["vocab"]))}
    with building_dir(target) as tmp:
        np.save(tmp / "sorted.npy", pieces[order])
        np.save(tmp / "ids.npy", order.astype(np.int32))
        np.save(tmp / "scores.npy", scores)
        (tmp / "skeleton.json").write_text(json.dumps(skeleton), encoding="utf-8")
        (tmp / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return True


class _Pieces:
    """A unigram vocabulary as arrays (``pieces/``), and the restricted tokenizers made from it."""

    def __init__(self, directory: Path):
        meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
        self.longest = int(meta["longest"])
        self.sorted = np.load(directory / "sorted.npy")
        self.ids = np.load(directory / "ids.npy")
        self.scores = np.load(directory / "scores.npy")
        self.skeleton = json.loads((directory / "skeleton.json").read_text(encoding="utf-8"))
        self.specials = {int(t["id"]): t["content"] for t in self.skeleton.get("added_tokens", [])}
        self.kept = {int(self.skeleton["model"]["unk_id"]), int(np.argmin(self.scores)),
                     *self.specials}
        self.by_id = np.empty_like(self.sorted)
        self.by_id[self.ids] = self.sorted
        self.splitter = self._tokenizer(sorted(self.kept))

    def _tokenizer(self, ids: Sequence[int]) -> Any:
        """The tokenizer restricted to the pieces ``ids`` (ascending) and the kept ones, its ids
        renumbered 0.. in that order (special tokens and the post-processor's ids included)."""
        from tokenizers import Tokenizer  # optional: the models extra

        new = {old: new for new, old in enumerate(ids)}
        vocab = [[str(self.by_id[i]), float(self.scores[i])] for i in ids]
        config = {**self.skeleton, "model": {**self.skeleton["model"], "vocab": vocab,
                                             "unk_id": new.get(self.skeleton["model"]["unk_id"])},
                  "added_tokens": [{**t, "id": new[int(t["id"])]}
                                   for t in self.skeleton.get("added_tokens", [])
                                   if int(t["id"]) in new]}
        post = config.get("post_processor") or {}
        if post.get("type") == "TemplateProcessing":
            config["post_processor"] = {**post, "special_tokens": {
                name: {**token, "ids": [new.get(i, i) for i in token["ids"]]}
                for name, token in post["special_tokens"].items()}}
        return Tokenizer.from_str(json.dumps(config))

    def found(self, texts: Sequence[str]) -> list[int]:
        """The ids of every piece that occurs in the normalised words of ``texts``, with the
        kept ones, ascending."""
        normalizer, pre = self.splitter.normalizer, self.splitter.pre_tokenizer
        words = {w for text in texts
                 for w, _ in pre.pre_tokenize_str(normalizer.normalize_str(text)
                                                  if normalizer else text)}
        longest = self.longest
        subs = np.array(sorted({w[i:j] for w in words for i in range(len(w))
                                for j in range(i + 1, min(len(w), i + longest) + 1)}) or [""])
        at = np.minimum(np.searchsorted(self.sorted, subs), len(self.sorted) - 1)
        hits = self.ids[at[self.sorted[at] == subs]]
        return sorted(self.kept | {int(i) for i in hits})

    def spells_special(self, texts: Sequence[str]) -> bool:
        """Whether a text contains a special token's spelling (the whole tokenizer splits there)."""
        return any(special in text for special in self.specials.values() for text in texts)

    def encode(self, texts: Sequence[str], max_length: int) -> list[list[int]]:
        """The ids of ``texts`` by the tokenizer restricted to their pieces."""
        ids = self.found(texts)
        tokenizer = self._tokenizer(ids)
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length)
        back = np.asarray(ids)
        return [back[e.ids].tolist() for e in tokenizer.encode_batch(list(texts))]


class SavedTokenizer:
    """The ``tokenizer.json`` of ``directory`` (run by the ``tokenizers`` library: the same ids
    as the transformers tokenizer saved with it, without importing transformers and PyTorch),
    truncating at ``max_length`` tokens.

    :meth:`encode` gives the same ids whichever way it takes (see the module's note).
    """

    def __init__(self, directory: Path, max_length: int):
        self.directory = Path(directory)
        self.max_length = max_length
        self._whole: Any = None
        self._quick_chars = 0
        self._pieces = self._load_pieces()
        self.pad_id = self._pad_id()

    def _load_pieces(self) -> _Pieces | None:
        """The vocabulary arrays, written beside the build on first use; ``None`` for a
        tokenizer that is not a unigram one, or when they can be neither read nor written."""
        source, target = self.directory / "tokenizer.json", self.directory / "pieces"
        try:
            meta = json.loads((target / "meta.json").read_text(encoding="utf-8"))
            current = {k: meta.get(k) for k in ("version", "size", "mtime_ns")}
            if current == _source_stamp(source):
                return _Pieces(target)
        except (OSError, ValueError, KeyError):
            pass
        try:
            return _Pieces(target) if _write_pieces(source, target) else None
        except OSError:  # a read-only build: the whole tokenizer serves
            return None

    def _pad_id(self) -> int:
        """The padding token's id (``tokenizer_config.json``'s ``pad_token``), else 0."""
        try:
            config = json.loads((self.directory / "tokenizer_config.json")
                                .read_text(encoding="utf-8"))
        except (OSError, ValueError):
            config = {}
        pad = config.get("pad_token")
        if not isinstance(pad, str):
            return 0
        if self._pieces is not None:
            at = int(np.searchsorted(self._pieces.sorted, pad))
            if at < len(self._pieces.sorted) and self._pieces.sorted[at] == pad:
                return int(self._pieces.ids[at])
        return int(self.whole.token_to_id(pad) or 0)

    @property
    def whole(self) -> Any:
        """The whole ``tokenizers.Tokenizer``, loaded on first use."""
        if self._whole is None:
            from tokenizers import Tokenizer  # optional: the models extra

            self._whole = Tokenizer.from_file(str(self.directory / "tokenizer.json"))
            self._whole.no_padding()
            self._whole.enable_truncation(self.max_length)
        return self._whole

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """The token ids of each text, special tokens included, truncated at ``max_length``."""
        chars = sum(len(t) for t in texts)
        if (self._whole is None and self._pieces is not None
                and self._quick_chars + chars <= QUICK_CHARS
                and not self._pieces.spells_special(texts)):
            self._quick_chars += chars
            return self._pieces.encode(texts, self.max_length)
        return [e.ids for e in self.whole.encode_batch(list(texts))]
