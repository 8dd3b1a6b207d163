"""The MP-BERT4CR model (§4.1.2): a hierarchical encoder on each side.

:class:`HierarchicalEncoder`: a sentence encoder (the transformer of any SentenceTransformer
model: a registry model such as ``e5-small-multilingual``, a directory, a hub name) whose token
vectors are mean-pooled within each sentence; the sentence vectors of a document are summed and
layer-normalised into the document vector.

:class:`CitrecModel`: a *manuscript* encoder (citing contexts) and a *citation* encoder (cited,
positive and negative papers alike, so their parameters are shared), both initialised from the
same weights and then updated separately. Saved as a directory (``citrec.json`` + one
SentenceTransformer directory and one ``layer_norm.safetensors`` per side) that
:func:`openmsd.models.registry.load_model` loads as a :class:`CitrecEncoder`: ``query`` texts go
through the manuscript encoder, ``passage`` texts through the citation encoder, and the vectors
are L2-normalised so that the index ranks by cosine, as the paper recommends.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn
from tqdm.auto import tqdm

from openmsd.models import registry
from openmsd.models.citrec.context import (
    CITATION_FUNDAMENTAL,
    CITATION_SUPPLEMENTAL,
    MANUSCRIPT_SUPPLEMENTAL,
    paper_context,
)
from openmsd.models.citrec.rerank import RerankFusion
from openmsd.models.citrec.sentences import document_sentences
from openmsd.models.encoder import Kind, normalise

MANIFEST = "citrec.json"
_SHARED_CACHES: dict[tuple[str, ...], dict[str, Tensor]] = {}
SIDES = ("manuscript", "citation")


@dataclass
class CitrecSettings:
    """What a saved model needs to read texts the way it was trained."""

    base: str
    query_prefix: str = ""
    passage_prefix: str = ""
    max_seq_length: int = 64
    manuscript_supplemental: int = MANUSCRIPT_SUPPLEMENTAL
    citation_fundamental: int = CITATION_FUNDAMENTAL
    citation_supplemental: int = CITATION_SUPPLEMENTAL
    frozen_base: bool = False
    """The transformers are the base model's, unchanged (``train_layers = 0``): only the heads
    are saved, and loading takes the transformer from ``base``."""
    sentence_weight: float = 0.6
    """``recommend``: weight of a location's own sentence in its query vector."""
    context_weight: float = 0.4
    """``recommend``: weight of its wider context (fundamental + macro context)."""
    supplemental_weight: float = 0.5
    """Initial weight of the mean supplemental sentence against the mean fundamental one."""
    fusion_weight: float | None = None
    """Two-stage ranking: the weight of this model's rank against the prefetch's (chosen on
    dev by ``train citrec``; None: not chosen)."""
    rerank: dict[str, Any] | None = None
    """Two-stage ranking by a learned fusion (:class:`openmsd.models.citrec.rerank.
    RerankFusion` as a dict: features and coefficients, fitted by ``train citrec``); when set
    it replaces ``fusion_weight``'s rank fusion."""


class HierarchicalEncoder(nn.Module):
    """Documents (lists of sentences) in, (len, dim) document vectors out: sentence encoder,
    mean pooling over tokens; each sentence vector is centred on the corpus's mean sentence
    vector (``centre``, a buffer) and L2-normalised; the document is the mean of its
    *fundamental* sentences plus ``supplemental_weight`` × the mean of its supplemental ones
    (a trained scalar), then layer normalisation and a linear projection (initialised to the
    identity).

    Why not the plain sum: sentence vectors of an encoder such as e5 share one large common
    direction (unrelated sentences sit at cosine ~0.8). Summed, that direction grows with the
    number of sentences while the content grows with its square root, so a document with many
    sentences (a long reference string cut into fragments, a 30-sentence macro context) is near
    every query and the cosine ranking gives all queries the same top 10 — the untrained
    model scored Recall@10 0 % on unarXive that way. And 27 supplemental sentences outvoted the
    3 that hold the citation.

    ``fundamental_last``: the fundamental sentences are the last ``fundamental`` ones
    (manuscript contexts: supplemental, then the fundamental context), else the first ones
    (a cited paper: title and abstract, then its body).

    When the transformer is frozen (``train_layers = 0``) its sentence vectors are cached:
    training then updates the heads at the cost of a sum per document."""

    def __init__(self, transformer: nn.Module, prefix: str = "", fundamental: int = 3,
                 fundamental_last: bool = True, supplemental_weight: float = 0.5):
        # optional: the models extra; sentence_transformers takes ~14.1 s to import
        from sentence_transformers.sentence_transformer.modules import Pooling

        super().__init__()
        self.transformer = transformer
        self.dim = int(transformer.get_embedding_dimension())
        self.pooling = Pooling(self.dim, "mean")
        self.norm = nn.LayerNorm(self.dim)
        self.projection = nn.Linear(self.dim, self.dim)
        with torch.no_grad():
            self.projection.weight.copy_(torch.eye(self.dim))
            self.projection.bias.zero_()
        self.register_buffer("centre", torch.zeros(self.dim))
        self.supplemental_weight = nn.Parameter(torch.tensor(float(supplemental_weight)))
        self.fundamental = fundamental
        self.fundamental_last = fundamental_last
        self.prefix = prefix
        self.cache: dict[str, Tensor] | None = None
        """Sentence → vector, when the transformer is frozen (see :meth:`freeze`)."""

    def freeze(self, shared: tuple[str, ...] | None = None) -> None:
        """Freeze the transformer and cache its sentence vectors from now on; encoders frozen
        with the same ``shared`` key (base model, prefix, sequence length: the same frozen
        weights) share one cache in the process."""
        for parameter in self.transformer.parameters():
            parameter.requires_grad_(False)
        self.cache = _SHARED_CACHES.setdefault(shared, {}) if shared else {}

    def head_state(self) -> dict[str, Tensor]:
        """The heads' parameters (``norm.*``, ``projection.*``, ``centre``,
        ``supplemental_weight``)."""
        return {**{f"norm.{k}": v for k, v in self.norm.state_dict().items()},
                **{f"projection.{k}": v for k, v in self.projection.state_dict().items()},
                "centre": self.centre, "supplemental_weight": self.supplemental_weight.data}

    def load_head(self, state: dict[str, Tensor]) -> None:
        """Parameters :meth:`head_state` gave; a file holding only the layer norm's (``weight``,
        ``bias``: models saved before the projection existed) keeps the identity projection."""
        if "norm.weight" not in state:
            self.norm.load_state_dict(state)
            return
        with torch.no_grad():
            if "centre" in state:
                self.centre.copy_(state["centre"])
            if "supplemental_weight" in state:
                self.supplemental_weight.copy_(state["supplemental_weight"])
        self.norm.load_state_dict({k[5:]: v for k, v in state.items() if k.startswith("norm.")})
        self.projection.load_state_dict({k[11:]: v for k, v in state.items()
                                         if k.startswith("projection.")})

    def _encode_sentences(self, sentences: list[str]) -> Tensor:
        features = self.transformer.preprocess([self.prefix + s for s in sentences])
        device = self.norm.weight.device
        features = {k: v.to(device) if isinstance(v, Tensor) else v
                    for k, v in features.items()}
        return self.pooling(self.transformer(features))["sentence_embedding"]

    def sentence_vectors(self, sentences: list[str]) -> Tensor:
        """(len, dim) mean-pooled token vectors of each sentence."""
        if self.cache is None:
            return self._encode_sentences(sentences)
        missing = list(dict.fromkeys(s for s in sentences if s not in self.cache))
        if missing:
            mode = self.transformer.training
            self.transformer.eval()  # cached vectors: no dropout noise frozen into them
            with torch.no_grad():
                for i in range(0, len(missing), 64):
                    chunk = missing[i:i + 64]
                    self.cache.update(zip(chunk, self._encode_sentences(chunk), strict=True))
            self.transformer.train(mode)
        return torch.stack([self.cache[s] for s in sentences])

    def warm(self, sentences: Sequence[str], progress: bool = True) -> int:
        """Encode into the cache (a frozen encoder's) every one of ``sentences`` not yet in it,
        64 at a time with a progress bar; how many were encoded. Training then draws its
        contexts from cached vectors only (seconds per epoch)."""
        if self.cache is None:
            return 0
        missing = list(dict.fromkeys(s for s in sentences if s not in self.cache))
        for i in tqdm(range(0, len(missing), 64), desc="sentence vectors",
                      disable=not progress or not missing):
            self.sentence_vectors(missing[i:i + 64])
        return len(missing)

    def forward(self, documents: Sequence[Sequence[str]], batch_size: int | None = None
                ) -> Tensor:
        empty = [i for i, d in enumerate(documents) if not d]
        if empty:
            raise ValueError(f"documents {empty[:5]}: a document needs at least one sentence")
        flat = [s for d in documents for s in d]
        owner = torch.tensor([i for i, d in enumerate(documents) for _ in d],
                             device=self.norm.weight.device)
        step = batch_size or len(flat)
        vectors = torch.cat([self.sentence_vectors(flat[i:i + step])
                             for i in range(0, len(flat), step)])
        vectors = nn.functional.normalize(vectors - self.centre, dim=-1)
        weights = vectors.new_tensor([w for d in documents for w in self.sentence_roles(len(d))])
        supplemental = weights == 0
        # mean of the fundamental sentences + supplemental_weight × mean of the others
        counts = vectors.new_zeros(len(documents), 2).index_add(
            0, owner, torch.stack([~supplemental, supplemental], 1).to(vectors.dtype))
        scale = torch.where(supplemental,
                            self.supplemental_weight / counts[owner, 1].clamp(min=1),
                            1 / counts[owner, 0].clamp(min=1))
        summed = vectors.new_zeros(len(documents), self.dim).index_add(
            0, owner, vectors * scale[:, None])
        return self.projection(self.norm(summed))

    def profile(self, documents: Sequence[Sequence[str]]) -> Tensor:
        """(len, dim) vectors of whole texts (a manuscript's finished content): the plain mean
        of each text's centred, L2-normalised sentence vectors, then the layer norm and the
        projection (no fundamental / supplemental roles: every sentence counts the same)."""
        owner = torch.tensor([i for i, d in enumerate(documents) for _ in d],
                             device=self.norm.weight.device)
        vectors = nn.functional.normalize(
            self.sentence_vectors([s for d in documents for s in d]) - self.centre, dim=-1)
        counts = vectors.new_zeros(len(documents)).index_add(
            0, owner, vectors.new_ones(len(owner)))
        mean = vectors.new_zeros(len(documents), self.dim).index_add(0, owner, vectors)
        return self.projection(self.norm(mean / counts.clamp(min=1)[:, None]))

    def sentence_roles(self, n: int) -> list[int]:
        """1 for each fundamental sentence of an ``n``-sentence document, 0 for the others."""
        k = min(n, self.fundamental)
        return [0] * (n - k) + [1] * k if self.fundamental_last else [1] * k + [0] * (n - k)

    def fit_centre(self, sentences: Sequence[str], limit: int = 4000) -> None:
        """Set ``centre`` to the mean vector of (an even spread of at most ``limit`` of)
        ``sentences``."""
        chosen = list(dict.fromkeys(sentences))
        chosen = [chosen[int(i * len(chosen) / limit)] for i in range(limit)] \
            if len(chosen) > limit else chosen
        if not chosen:
            return
        with torch.no_grad():
            vectors = torch.cat([self.sentence_vectors(chosen[i:i + 64])
                                 for i in range(0, len(chosen), 64)])
            self.centre.copy_(vectors.mean(0))


class CitrecModel(nn.Module):
    """The manuscript encoder and the citation encoder of MP-BERT4CR."""

    def __init__(self, manuscript: HierarchicalEncoder, citation: HierarchicalEncoder,
                 settings: CitrecSettings):
        super().__init__()
        self.manuscript = manuscript
        self.citation = citation
        self.settings = settings

    @classmethod
    def from_base(cls, path: str, settings: CitrecSettings, device: str | None = None
                  ) -> CitrecModel:
        """Both encoders from the transformer of the SentenceTransformer at ``path``."""
        # optional: the models extra; sentence_transformers takes ~14.1 s to import
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(path, device=device or "cpu")
        transformer = model[0]
        transformer.max_seq_length = settings.max_seq_length
        manuscript, citation = side_encoders(copy.deepcopy(transformer), transformer, settings)
        return cls(manuscript, citation, settings)

    def save(self, directory: Path) -> None:
        """Write the model into ``directory`` (which must exist and be empty)."""
        # optional: the models extra (safetensors ~0.3 s, sentence_transformers ~14.1 s)
        from safetensors.torch import save_file
        from sentence_transformers import SentenceTransformer

        for side in SIDES:
            encoder: HierarchicalEncoder = getattr(self, side)
            if self.settings.frozen_base:
                (directory / side).mkdir(parents=True, exist_ok=True)
            else:
                SentenceTransformer(modules=[encoder.transformer, encoder.pooling]).save(
                    str(directory / side))
            save_file({k: v.detach().cpu().contiguous() for k, v in
                       encoder.head_state().items()},
                      str(directory / side / "layer_norm.safetensors"))
        (directory / MANIFEST).write_text(json.dumps(asdict(self.settings), indent=2))

    @classmethod
    def load(cls, directory: Path, device: str | None = None) -> CitrecModel:
        """A model :meth:`save` wrote."""
        # optional: the models extra (safetensors ~0.3 s, sentence_transformers ~14.1 s)
        from safetensors.torch import load_file
        from sentence_transformers import SentenceTransformer

        settings = read_settings(directory)
        encoders = []
        for side in SIDES:
            head = directory / side / "layer_norm.safetensors"
            try:
                source = str(directory / side)
                if settings.frozen_base:
                    source = registry.base_path(settings.base)
                transformer = SentenceTransformer(source, device=device or "cpu")[0]
                encoder = side_encoders(transformer, transformer, settings)[SIDES.index(side)]
                encoder.load_head(load_file(str(head)))
            except Exception as error:  # torch, safetensors and transformers raise many kinds
                raise ValueError(f"{directory}: not a complete citrec model: its {side} "
                                 f"encoder ({directory / side}) cannot be loaded ({error})"
                                 ) from None
            transformer.max_seq_length = settings.max_seq_length
            encoders.append(encoder)
        return cls(*encoders, settings)


def side_encoders(manuscript: nn.Module, citation: nn.Module, settings: CitrecSettings
                  ) -> tuple[HierarchicalEncoder, HierarchicalEncoder]:
    """The manuscript and citation encoders of ``settings`` on these transformers."""
    return (HierarchicalEncoder(manuscript, settings.query_prefix, 3, True,
                                settings.supplemental_weight),
            HierarchicalEncoder(citation, settings.passage_prefix,
                                settings.citation_fundamental, False,
                                settings.supplemental_weight))


def read_settings(directory: Path) -> CitrecSettings:
    """The settings of a saved model; ValueError naming the file when it is not one."""
    path = Path(directory) / MANIFEST
    try:
        values: dict[str, Any] = json.loads(path.read_text())
        settings = CitrecSettings(**values)
        if settings.rerank is not None:
            RerankFusion.of(settings.rerank)
        return settings
    except (OSError, ValueError, TypeError) as error:
        raise ValueError(f"{path}: not a citrec model settings file ({error})") from None


def save_sentence_caches(path: Path) -> None:
    """Write every frozen encoder's sentence-vector cache of this process to ``path``
    (atomically), so that another process (the next seed, an ablation) starts from it."""
    tmp = Path(path).with_suffix(".tmp")
    torch.save({key: {s: v.clone() for s, v in cache.items()}
                for key, cache in _SHARED_CACHES.items()}, tmp)
    tmp.replace(path)


def load_sentence_caches(path: Path) -> int:
    """Merge the caches :func:`save_sentence_caches` wrote into this process's; the number of
    sentence vectors read (0 when ``path`` does not exist)."""
    if not Path(path).is_file():
        return 0
    stored = torch.load(path, weights_only=True)
    for key, cache in stored.items():
        _SHARED_CACHES.setdefault(tuple(key), {}).update(cache)
    return sum(len(c) for c in stored.values())


def cache_key(settings: CitrecSettings, side: str) -> tuple[str, ...]:
    """The shared sentence-vector cache of a frozen ``side`` encoder of ``settings``."""
    prefix = settings.query_prefix if side == "manuscript" else settings.passage_prefix
    return (settings.base, prefix, str(settings.max_seq_length))


def frozen_transformer(directory: str | Path) -> bool:
    """Whether the model in ``directory`` was trained with its transformer frozen
    (``citrec_train.json``: ``train_layers = 0``), so its sentence vectors are the base's."""
    try:
        trained = json.loads((Path(directory) / "citrec_train.json").read_text())
        return trained["config"].get("train_layers") == 0
    except (OSError, ValueError, KeyError, TypeError):
        return False


def is_citrec_model(path: str | Path) -> bool:
    """Whether ``path`` is a directory :meth:`CitrecModel.save` wrote."""
    return (Path(path) / MANIFEST).is_file()


class CitrecEncoder:
    """A saved :class:`CitrecModel` as a :class:`openmsd.models.encoder.DenseEncoder`.

    A text is a document: its lines are split into sentences. ``query`` documents keep their
    last ``3 + manuscript_supplemental`` sentences (callers put the supplemental context first,
    then the fundamental context); ``passage`` documents (a paper's title and abstract, then
    any body text) keep the first ``citation_fundamental`` sentences and an even spread of
    ``citation_supplemental`` of the rest."""

    def __init__(self, directory: str | Path, name: str | None = None,
                 device: str | None = None):
        self.model = CitrecModel.load(Path(directory), device).eval()
        self.settings = self.model.settings
        if self.settings.frozen_base or frozen_transformer(directory):
            for side, encoder in zip(SIDES, (self.model.manuscript, self.model.citation),
                                     strict=True):
                encoder.freeze(cache_key(self.settings, side))
        self.name = name or Path(directory).name
        self.dim = self.model.manuscript.dim
        self.supplemental = self.settings.manuscript_supplemental
        """How many supplemental sentences a manuscript context should bring (recommend)."""

    def documents(self, texts: Sequence[str], kind: Kind) -> list[list[str]]:
        """The sentences each text is encoded from."""
        out = []
        for text in texts:
            sentences = document_sentences(text) or [text.strip() or "."]
            if kind == "query":
                out.append(sentences[-(3 + self.settings.manuscript_supplemental):])
            else:
                fundamental = self.settings.citation_fundamental
                out.append(paper_context(sentences[:fundamental], sentences[fundamental:],
                                         fundamental, self.settings.citation_supplemental))
        return out

    def encode_documents(self, documents: Sequence[Sequence[str]], kind: Kind = "passage",
                         batch_size: int = 32) -> np.ndarray:
        """L2-normalised vectors of documents given as sentences."""
        encoder = self.model.manuscript if kind == "query" else self.model.citation
        rows = []
        with torch.inference_mode():
            for i in range(0, len(documents), batch_size):
                rows.append(encoder(documents[i:i + batch_size], batch_size=64).cpu().numpy())
        if not rows:
            return np.zeros((0, self.dim), np.float32)
        return normalise(np.vstack(rows))

    def encode(self, texts: Sequence[str], kind: Kind = "passage",
               batch_size: int = 32) -> np.ndarray:
        return self.encode_documents(self.documents(texts, kind), kind, batch_size)

    def encode_profiles(self, documents: Sequence[Sequence[str]], batch_size: int = 16
                        ) -> np.ndarray:
        """L2-normalised whole-manuscript vectors (the manuscript encoder's
        :meth:`HierarchicalEncoder.profile`) of texts given as sentences: the rerank stage's
        ``manuscript`` feature is their cosine with the candidates' passage vectors."""
        rows = []
        with torch.inference_mode():
            for i in range(0, len(documents), batch_size):
                rows.append(self.model.manuscript.profile(documents[i:i + batch_size])
                            .cpu().numpy())
        return normalise(np.vstack(rows)) if rows else np.zeros((0, self.dim), np.float32)
