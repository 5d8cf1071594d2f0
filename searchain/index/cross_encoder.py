"""Cross-encoder re-ranking: a second stage that reads the query and each candidate together.

The first-stage retriever (hybrid by default) embeds query and passage apart; a cross-encoder
(a BERT-style sequence classifier over ``[CLS] query [SEP] title + text``, for example
``cross-encoder/ms-marco-MiniLM-L-6-v2``) attends across both and is the usual way to sharpen
the top of a ranking. ``RerankedRetriever`` takes the first stage's ``depth`` best candidates,
scores each pair, and orders them by that score.

It is off by default: no re-ranker's weights ship with the app, and it costs ``depth`` model
forward passes per query. ``searchain reranker pull`` downloads one into
``<models_dir>/rerankers/<name>``; setting ``retrieval.reranker`` to that name (or to a folder)
turns it on for search, the SearChain loop and ``searchain bench retrieval``.
sentence-transformers and torch are imported when a re-ranker is constructed.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from ..config import AppPaths
from ..errors import ModelError
from ..events import CancelToken, EventCallback
from ..hub_folder import WEIGHT_FILES, download_model_folder, loading_model_folder
from ..types import Hit, Passage

DEFAULT_RERANKER = "cross-encoder/ms-marco-MiniLM-L-6-v2"
RERANKERS_DIR = "rerankers"


def reranker_dir(paths: AppPaths, name: str = DEFAULT_RERANKER) -> Path:
    """Where the re-ranker ``name`` lives once downloaded: ``<models_dir>/rerankers/<name>``."""
    return paths.models_dir / RERANKERS_DIR / name


def is_cross_encoder_dir(path: Path) -> bool:
    """Whether ``path`` holds a sequence-classification checkpoint with weights and a tokenizer."""
    path = Path(path)
    config = path / "config.json"
    if not (config.is_file() and any((path / w).is_file() for w in WEIGHT_FILES)
            and ((path / "vocab.txt").is_file() or (path / "tokenizer.json").is_file())):
        return False
    try:
        architectures = json.loads(config.read_text(encoding="utf-8")).get("architectures") or []
    except (OSError, ValueError, AttributeError):
        return False
    return any(str(a).endswith("ForSequenceClassification") for a in architectures)


def installed_rerankers(paths: AppPaths) -> list[str]:
    """Names of the re-rankers under ``<models_dir>/rerankers`` (``owner/name`` or ``name``)."""
    root = paths.models_dir / RERANKERS_DIR
    if not root.is_dir():
        return []
    found = []
    for config in sorted(root.glob("**/config.json")):
        folder = config.parent
        if not any(part.startswith(".") for part in folder.relative_to(root).parts) \
                and is_cross_encoder_dir(folder):
            found.append(folder.relative_to(root).as_posix())
    return found


def resolve_reranker(name_or_path: str | os.PathLike, models_dir: Path | None = None) -> Path:
    """A folder path as given, else ``<models_dir>/rerankers/<name>``; ModelError if neither
    holds a cross-encoder."""
    candidate = Path(name_or_path).expanduser()
    tried = [candidate]
    if not is_cross_encoder_dir(candidate) and models_dir is not None:
        candidate = Path(models_dir) / RERANKERS_DIR / str(name_or_path)
        tried.append(candidate)
    if is_cross_encoder_dir(candidate):
        return candidate
    raise ModelError(
        f"No cross-encoder re-ranker found at {' or '.join(str(t) for t in tried)} (expected "
        "config.json of a *ForSequenceClassification model, its weights and a tokenizer).",
        hint=f"Download one with `searchain reranker pull` ({DEFAULT_RERANKER}; needs a network "
        "once), or turn re-ranking off (retrieval.reranker = \"\").",
    )


class CrossEncoderReranker:
    """Scores (query, passage) pairs with a sentence-transformers ``CrossEncoder``; higher is better."""

    def __init__(self, name_or_path: str | os.PathLike, *, models_dir: Path | None = None,
                 batch_size: int = 32, max_length: int = 256):
        self.path = resolve_reranker(name_or_path, models_dir)
        self.name = f"cross-encoder:{self.path.name}"
        self.batch_size = max(1, int(batch_size))
        # One forward pass at a time: the app's search dialog and an answer may share it.
        self._lock = threading.Lock()
        with loading_model_folder("re-ranker", self.path, needs="sentence-transformers and torch",
                                  otherwise="turn re-ranking off"):
            from sentence_transformers import CrossEncoder

            from ..quiet import no_transformers_progress

            with no_transformers_progress():
                self._model = CrossEncoder(str(self.path), max_length=max_length)

    def scores(self, query: str, passages: list[Passage]) -> list[float]:
        """One relevance score per passage, in input order."""
        if not passages:
            return []
        pairs = [(query, f"{p.title}\n{p.text}" if p.title else p.text) for p in passages]
        with self._lock:
            out = self._model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False,
                                      convert_to_numpy=True)
        return [float(s) for s in out]


class RerankedRetriever:
    """``first``'s top ``depth`` candidates, ordered by ``reranker``; ties keep ``first``'s order."""

    def __init__(self, first, reranker: CrossEncoderReranker, *, depth: int = 20):
        if depth < 1:
            raise ValueError(f"rerank depth must be >= 1, got {depth}")
        self.first = first
        self.reranker = reranker
        self.depth = int(depth)
        self.name = f"{first.name}+rerank"
        self.source = getattr(first, "source", None)

    def search(self, query: str, k: int = 5) -> list[Hit]:
        candidates = self.first.search(query, max(k, self.depth))
        scores = self.reranker.scores(query, [h.passage for h in candidates])
        order = sorted(range(len(candidates)), key=lambda i: -scores[i])  # stable
        return [Hit(candidates[i].passage, scores[i], self.name) for i in order[:k]]


def download_reranker(paths: AppPaths, name: str = DEFAULT_RERANKER, *, endpoint: str | None = None,
                      on_event: EventCallback | None = None, cancel: CancelToken | None = None) -> Path:
    """Fetch the cross-encoder ``name`` into ``reranker_dir(paths, name)`` (all or nothing)."""
    return download_model_folder(
        name, reranker_dir(paths, name), what="re-ranker", is_complete=is_cross_encoder_dir,
        manual_hint=f"Any cross-encoder checkpoint works, e.g. {DEFAULT_RERANKER}.",
        endpoint=endpoint, on_event=on_event, cancel=cancel)
