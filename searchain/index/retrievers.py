"""The retrievers and ``open_retriever``, the one way the rest of SearChain gets one.

All three share the ``Retriever`` shape: ``search(query, k=5) -> list[Hit]``, best first, safe
to call from several threads at once. BM25 needs only the passage store (no model, no index),
so keyword search works even before the vector index is built.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, Sequence, runtime_checkable

from ..config import AppPaths, Settings
from ..errors import ConfigError
from ..events import CancelToken, EventCallback
from ..types import Hit
from .bm25.fts5 import BM25Retriever
from .dense import DenseRetriever, open_vectors
from .embed.embedder import Embedder
from .embed.second import second_embedder_name
from .hybrid import HybridRetriever
from .layout import IndexLayout
from .mixed import MixedRetriever, parse_corpora
from .passages import PassageSource

if TYPE_CHECKING:
    from .cross_encoder import CrossEncoderReranker

KINDS = ("dense", "bm25", "hybrid")
log = logging.getLogger("searchain.retrieval")


@dataclass(frozen=True)
class KeywordOnly:
    """An event: ``corpus`` is searched by keywords alone, because its vector index is not
    built yet (hybrid search, the default, falls back to BM25 rather than failing; a corpus
    the size of Wikipedia takes days to embed on a CPU and is searchable as soon as ingested)."""

    corpus: str

    @property
    def message(self) -> str:
        return f"Searching '{self.corpus}' by keywords only until its vector index is built."

    @property
    def hint(self) -> str:
        return (f"Build it with `searchain corpus index {self.corpus}` (in the app: Corpus › Manage "
                "corpora…, then Update › Update index). Until then answers can miss passages that "
                "say the same in other words.")


def keyword_only(paths: AppPaths, settings: Settings, names: Sequence[str], kind: str | None = None) -> list[str]:
    """Which of ``names`` a ``kind`` retriever (None: the setting's) searches by keywords alone:
    with hybrid search, the existing corpora whose vector index was never finished."""
    from ..corpus.manager import CorpusManager

    if (kind or settings.retrieval.retriever).strip().lower() != "hybrid":
        return []
    manager = CorpusManager(paths, settings)
    return [name for name in names if manager.exists(name)
            and not IndexLayout(manager.corpus_dir(name) / "index").meta_file.exists()]


__all__ = ["KINDS", "Retriever", "DenseRetriever", "BM25Retriever", "HybridRetriever", "MixedRetriever",
           "KeywordOnly", "keyword_only", "open_retriever"]


@runtime_checkable
class Retriever(Protocol):
    name: str

    def search(self, query: str, k: int = 5) -> list[Hit]: ...


def open_retriever(paths: AppPaths, settings: Settings, corpus_name: str | Sequence[str],
                   kind: str | None = None,
                   embedder: Embedder | None = None, *, rerank: bool = True,
                   reranker: "CrossEncoderReranker | None" = None,
                   second_embedder: Embedder | None = None) -> Retriever:
    """A retriever over ``corpus_name``; ``kind`` None means ``settings.retrieval.retriever``.

    When ``settings.retrieval.reranker`` names a cross-encoder and ``rerank`` is true, the
    retriever is wrapped in a ``RerankedRetriever`` (``reranker`` reuses a loaded model).
    When a second embedding model is in use (``settings.retrieval.second_embedder``, ``auto``
    resolved by ``second.second_embedder_name``), the hybrid retriever also scores
    with it (``second_embedder`` reuses a loaded one); while that model's index is not usable
    (not built yet, or built by another model) hybrid runs without it and says so in the log,
    and ``index_status`` reports the corpus as needing a build.
    Several corpora (``"a,b"`` or a list) give a ``MixedRetriever`` (``mixed.py``): one
    first-stage retriever per corpus, fused by rank, then re-ranked once over all of them.
    Hybrid search of a corpus whose vector index was never finished is keyword search (BM25)
    until it is (``keyword_only`` names such corpora, ``KeywordOnly`` is the event that says so).
    Raises ``CorpusError`` for an unknown corpus (naming which of several), ``IndexError_`` when
    a dense retriever meets a missing index or either meets a damaged or other-model one, ``ModelError``
    for a re-ranker that is not installed, ``ConfigError`` for a bad kind.
    """
    names = parse_corpora(corpus_name)
    if len(names) == 1:
        first = _first_stage(paths, settings, names[0], kind, embedder, second_embedder)
    else:
        first = _mixed_first_stage(paths, settings, names, kind, embedder, second_embedder)
    r = settings.retrieval
    if not (rerank and (reranker is not None or r.reranker.strip())):
        return first
    from .cross_encoder import CrossEncoderReranker, RerankedRetriever

    try:
        reranker = reranker or CrossEncoderReranker(r.reranker.strip(), models_dir=paths.models_dir)
        return RerankedRetriever(first, reranker, depth=r.rerank_depth)
    except BaseException:
        _close(first)
        raise


def _close(retriever) -> None:
    if isinstance(retriever, MixedRetriever):
        retriever.close()
    else:
        retriever.source.close()


def _mixed_first_stage(paths: AppPaths, settings: Settings, names: list[str], kind: str | None,
                       embedder: Embedder | None, second_embedder: Embedder | None) -> MixedRetriever:
    """One first stage per corpus (all the same kind, sharing the loaded models); a missing
    corpus is named among the ones asked for, and nothing opened so far stays open."""
    from ..errors import CorpusError

    r = settings.retrieval
    if embedder is None and (kind or r.retriever).strip().lower() != "bm25":
        embedder = Embedder.for_settings(r, models_dir=paths.models_dir)  # one model for all
    parts: dict[str, Retriever] = {}
    try:
        for name in names:
            try:
                parts[name] = _first_stage(paths, settings, name, kind, embedder, second_embedder)
            except CorpusError as exc:
                raise CorpusError(f"{exc.message} It is one of the corpora searched together: "
                                  f"{', '.join(names)}.",
                                  hint=f"Search without it ({', '.join(n for n in names if n != name) or '-'}), "
                                       f"or add it again with `searchain corpus add {name} ...`. "
                                       + (exc.hint or "")) from exc
    except BaseException:
        for part in parts.values():
            part.source.close()
        raise
    return MixedRetriever(parts, depth=r.hybrid_depth)


def finish_keyword_indexes(paths: AppPaths, settings: Settings, names: Sequence[str], *,
                           on_event: EventCallback | None = None, cancel: CancelToken | None = None) -> None:
    """Build, with progress and a way to cancel, what a large ingest left of each named corpus's
    keyword index (``bm25.ready.make_ready``: tantivy where it serves the corpus, else the rest
    of FTS5), so that it is not built inside the first search, silently (minutes at Wikipedia
    size). Missing corpora are skipped: ``open_retriever`` names them."""
    from ..corpus.manager import CorpusManager
    from .bm25.ready import make_ready

    manager = CorpusManager(paths, settings)
    for name in names:
        if not manager.exists(name):
            continue
        with manager.open_store(name) as store:  # one meta read when nothing is left to build
            make_ready(store, settings.retrieval.bm25_title_weight, on_event=on_event, cancel=cancel)


def _first_stage(paths: AppPaths, settings: Settings, corpus_name: str, kind: str | None,
                 embedder: Embedder | None, second_embedder: Embedder | None) -> Retriever:
    from ..corpus.manager import CorpusManager

    r = settings.retrieval
    kind = (kind or r.retriever).strip().lower()
    if kind not in KINDS:
        raise ConfigError(f"Unknown retriever {kind!r}.", hint=f"Use one of: {', '.join(KINDS)}.")
    manager = CorpusManager(paths, settings)
    store = manager.open_store(corpus_name)
    source = PassageSource(store)
    try:
        bm25 = BM25Retriever(source, title_weight=r.bm25_title_weight, idf_power=r.bm25_idf_power)
        layout = IndexLayout(manager.corpus_dir(corpus_name) / "index")
        if kind == "bm25" or (kind == "hybrid" and not layout.meta_file.exists()):
            return bm25  # hybrid before the vector index exists: see ``KeywordOnly``
        embedder = embedder or Embedder.for_settings(r, models_dir=paths.models_dir)
        index, _ = open_vectors(layout, corpus_name, embedder)
        dense = DenseRetriever(source, index, embedder)
        if kind == "dense":
            return dense
        second = None
        # auto's choice depends on the corpus's size: a shared second embedder may not apply here.
        second_name = second_embedder_name(r, paths.models_dir, passages=store.count())
        if second_name:
            second = _second_dense(paths, settings, corpus_name, layout.second, source,
                                   second_embedder or Embedder.for_settings(r, second_name,
                                                                            models_dir=paths.models_dir))
        return HybridRetriever(dense, bm25, dense_weight=r.hybrid_dense_weight,
                               depth=r.hybrid_depth, method=r.hybrid_method,
                               title_boost=r.hybrid_title_boost, second=second)
    except BaseException:
        source.close()
        raise


def _second_dense(paths: AppPaths, settings: Settings, corpus_name: str, layout: IndexLayout,
                  source: PassageSource, embedder: Embedder) -> DenseRetriever | None:
    """The second model's retriever, or None (logged) while its index cannot be used: search
    must keep working between turning the model on and the next index build."""
    from ..errors import IndexError_

    try:
        index, _ = open_vectors(layout, corpus_name, embedder)
    except IndexError_ as exc:
        log.warning("hybrid search of '%s' runs without the second model %s: %s",
                    corpus_name, embedder.model_id, exc.message)
        return None
    return DenseRetriever(source, index, embedder)
