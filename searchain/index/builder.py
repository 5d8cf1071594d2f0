"""Build a corpus's vector index: resumable, incremental, atomic.

1. Embed: passages with an id above the largest id already checkpointed are read from the
   store in shard-sized batches, embedded, and written as one shard each (``shards.py``).
   A build killed at any point resumes after the last complete shard.
2. Graph: if a valid graph exists, the new shards' vectors are added to it (nothing old is
   re-embedded or re-inserted); otherwise a graph is built from all shards. Passages deleted
   from the corpus are marked deleted in the graph.
3. Save: the graph is written to a temp file and renamed, then ``meta.json`` (also atomic)
   records the embedder, dimension, counts and the graph's SHA-256.
"""

from __future__ import annotations

import logging
import shutil
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass

import numpy as np

from ..config import AppPaths, Settings
from ..errors import IndexError_, ModelError, is_disk_full
from ..events import CancelToken, EventCallback, Progress, check, emit
from ..types import Passage
from .embedder import Embedder
from .hnsw import HnswIndex, estimated_memory, physical_memory
from .layout import DOC_FORMAT, IndexLayout, IndexMeta, rebuild_hint
from .second import second_embedder_name
from .shards import ShardStore
from .status import graph_problem, mismatch_message

log = logging.getLogger("searchain.index")
DEFAULT_SHARD_SIZE = 4096
MAX_RAM_SHARE = 0.75  # of physical memory, for the graph: the app also holds an LLM
EMBED_STAGE, GRAPH_STAGE = "embed", "index"
SECOND_STAGES = ("embed 2nd", "index 2nd")  # the second embedder's index, when one is configured


@dataclass(frozen=True)
class IndexReport:
    corpus: str
    embedder: str
    dim: int
    embedded: int  # passages embedded by this call
    reused: int  # vectors taken from checkpoints of an earlier (possibly killed) run
    added_to_graph: int
    removed_from_graph: int  # passages gone from the corpus, marked deleted
    total: int  # live vectors in the index now
    embed_s: float
    graph_s: float
    total_s: float
    rebuilt_graph: bool  # True when the graph was built from scratch
    second_embedder: str = ""  # model id of retrieval.second_embedder, "" when off
    second_embedded: int = 0  # passages it embedded in this call
    second_problem: str = ""  # why the second model's index was not built (it could not be loaded)
    embed_precision: str = "fp32"  # what the embedding ran in (fp32 | bf16, retrieval.embed_precision)

    @property
    def passages_per_s(self) -> float:
        return self.embedded / self.embed_s if self.embed_s > 0 else 0.0

    def to_dict(self) -> dict:
        return {**asdict(self), "passages_per_s": round(self.passages_per_s, 1)}


def doc_text(passage: Passage) -> str:
    """What gets embedded for a passage (see layout.DOC_FORMAT): its title, then its text."""
    return f"{passage.title}\n{passage.text}" if passage.title else passage.text


def build_index(paths: AppPaths, settings: Settings, corpus_name: str, *, rebuild: bool = False,
                on_event: EventCallback | None = None, cancel: CancelToken | None = None,
                embedder: Embedder | None = None, second_embedder: Embedder | None = None,
                shard_size: int = DEFAULT_SHARD_SIZE) -> IndexReport:
    """Bring ``corpus_name``'s index up to date with its passages; see the module docstring.

    ``rebuild`` discards everything (checkpoints included) and starts over: the way out of a
    ``mismatch`` (another embedder) or a damaged index. Without it, an index made by another
    embedder raises ``IndexError_``. Cancelling keeps the finished shards for the next run.

    When a second model is in use (``retrieval.second_embedder``, ``auto`` resolved by
    ``second.second_embedder_name``; ``second_embedder`` reuses a loaded one),
    its index under ``index/second`` is brought up to date the same way, after the first; one
    made by a model no longer configured is replaced, since nothing else can use it. A second
    model that cannot be loaded does not stop the first index: the report's ``second_problem``
    says why (search runs without the second model meanwhile).
    """
    from ..corpus.manager import CorpusManager

    started = time.perf_counter()
    r = settings.retrieval
    embedder = embedder or Embedder(r.embedder, models_dir=paths.models_dir, precision=r.embed_precision)
    second_name = second_embedder_name(r, paths.models_dir) if second_embedder is None else ""
    if second_name:
        second_embedder = Embedder(second_name, models_dir=paths.models_dir, precision=r.embed_precision)
    manager = CorpusManager(paths, settings)
    layout = IndexLayout(manager.corpus_dir(corpus_name) / "index")

    second_problem = ""
    if second_embedder is not None:
        # Loading can take a while (a packaged model is unpacked on first use): say so.
        emit(on_event, Progress(SECOND_STAGES[0], 0, 0, f"loading {second_embedder.model_id}"))
        try:
            _ = second_embedder.dim  # loads it: a missing model is found before any work
        except ModelError as exc:
            second_problem = f"{exc.message} {exc.hint or ''}".strip()
            log.warning("index of '%s' built without the second model: %s", corpus_name, second_problem)
            second_embedder = None
    with manager.open_store(corpus_name) as store:
        # Before anything is deleted or embedded: graphs that cannot fit are refused outright.
        dims = [embedder.dim] + ([second_embedder.dim] if second_embedder else [])
        _check_memory(corpus_name, store.count(), dims, r.hnsw_m)
        if rebuild:
            shutil.rmtree(layout.root, ignore_errors=True)
        first = _build_layout(store, corpus_name, layout, embedder, r, on_event, cancel, shard_size,
                              stages=(EMBED_STAGE, GRAPH_STAGE))
        second = None
        if second_embedder is not None:
            if _owner_differs(layout.second, corpus_name, second_embedder):
                shutil.rmtree(layout.second.root, ignore_errors=True)
            second = _build_layout(store, corpus_name, layout.second, second_embedder, r, on_event,
                                   cancel, shard_size, stages=SECOND_STAGES)
    embed_s = first.embed_s + (second.embed_s if second else 0.0)
    return IndexReport(corpus=corpus_name, embedder=embedder.model_id, dim=embedder.dim,
                       embedded=first.embedded, reused=first.reused, added_to_graph=first.added,
                       removed_from_graph=first.removed, total=first.total, embed_s=embed_s,
                       graph_s=first.graph_s + (second.graph_s if second else 0.0),
                       total_s=time.perf_counter() - started, rebuilt_graph=first.rebuilt,
                       second_embedder=second_embedder.model_id if second_embedder else "",
                       second_embedded=second.embedded if second else 0,
                       second_problem=second_problem,
                       embed_precision=embedder.effective_precision)


@dataclass(frozen=True)
class _LayoutBuild:
    embedded: int
    reused: int
    added: int
    removed: int
    total: int
    embed_s: float
    graph_s: float
    rebuilt: bool


def _owner_differs(layout: IndexLayout, corpus_name: str, embedder: Embedder) -> bool:
    try:
        existing = ShardStore(layout, corpus_name).owner()
    except IndexError_:
        return True
    return existing is not None and existing != {"embedder": embedder.model_id, "doc_format": DOC_FORMAT}


def _build_layout(store, corpus_name: str, layout: IndexLayout, embedder: Embedder, r,
                  on_event, cancel, shard_size: int, *, stages: tuple[str, str]) -> _LayoutBuild:
    """Embed, extend the graph and save, for one embedder's index (see the module docstring)."""
    embed_stage, graph_stage = stages
    shards = ShardStore(layout, corpus_name)
    owner = {"embedder": embedder.model_id, "doc_format": DOC_FORMAT}
    with _disk_full_is_resumable(corpus_name, shards):
        existing = shards.owner()
        if existing is not None and existing != owner:
            raise IndexError_(mismatch_message(corpus_name, existing.get("embedder", "?"),
                                               embedder.model_id), hint=rebuild_hint(corpus_name))
        layout.root.mkdir(parents=True, exist_ok=True)
        shards.set_owner(owner)
        before = shards.summary()
        live_ids = np.fromiter((row[0] for row in store.conn.execute("SELECT id FROM passages")),
                               dtype=np.int64)
        if before.max_id > store.max_id():
            raise IndexError_(f"The index of corpus '{corpus_name}' holds passage ids the corpus "
                              "never had (was the corpus replaced?).", hint=rebuild_hint(corpus_name))

        # -- 1. embed what no shard holds yet ---------------------------------------------
        t0 = time.perf_counter()
        to_embed = int((live_ids > before.max_id).sum())
        embedded = 0
        seq = shards.next_seq()
        emit(on_event, Progress(embed_stage, 0, to_embed, f"embedding {to_embed} passages"
                                + ("" if embed_stage == EMBED_STAGE else f" with {embedder.model_id}")))
        for batch in store.iter_batches(after_id=before.max_id, batch_size=shard_size):
            check(cancel)
            ids = np.array([i for i, _ in batch], dtype=np.int64)
            texts = [doc_text(p) for _, p in batch]
            done_before = embedded

            def relay(ev, done_before=done_before):
                if isinstance(ev, Progress):
                    emit(on_event, Progress(embed_stage, done_before + ev.done, to_embed))

            vectors = embedder.encode(texts, batch_size=r.batch_size, on_event=relay, cancel=cancel)
            shards.write(seq, ids, vectors)
            seq += 1
            embedded += len(batch)
        embed_s = time.perf_counter() - t0

        # -- 2. graph -------------------------------------------------------------------
        t1 = time.perf_counter()
        dim = embedder.dim
        graph, graph_max, rebuilt = _open_existing_graph(layout, corpus_name, owner, dim, r)
        if graph is None:
            graph = HnswIndex(dim, m=r.hnsw_m, ef_construction=r.hnsw_ef_construction,
                              ef=r.hnsw_ef_search)
            graph.init_empty(before.vectors + embedded)
            graph_max = 0
        pending = shards.count_after(graph_max)
        added = 0
        emit(on_event, Progress(graph_stage, 0, pending))
        for ids, vectors in shards.iter_shards(after_id=graph_max):
            check(cancel)
            if vectors.shape[1] != dim:
                raise IndexError_(f"Checkpoints of corpus '{corpus_name}' hold {vectors.shape[1]}-d "
                                  f"vectors, the model makes {dim}-d ones.", hint=rebuild_hint(corpus_name))
            graph.add(vectors, ids)
            added += len(ids)
            emit(on_event, Progress(graph_stage, added, pending))
        removed = _mark_deleted(graph, live_ids)
        graph_s = time.perf_counter() - t1

        # -- 3. save --------------------------------------------------------------------
        if added or removed or rebuilt or not layout.meta_file.exists():
            checksum = graph.save(layout.hnsw_file)
            total = int(np.isin(graph.labels(), live_ids).sum())
            top = max(graph_max, int(live_ids.max()) if len(live_ids) else 0)
            IndexMeta(embedder=embedder.model_id, dim=dim, normalized=True, count=total,
                      max_id=top, checksum=checksum, hnsw_m=graph.m,
                      hnsw_ef_construction=graph.ef_construction).write(layout.meta_file)
        else:
            total = IndexMeta.read(layout.meta_file, corpus_name).count
    return _LayoutBuild(embedded=embedded, reused=before.vectors, added=added, removed=removed,
                        total=total, embed_s=embed_s, graph_s=graph_s, rebuilt=rebuilt)


def _check_memory(corpus_name: str, count: int, dims: list[int], m: int) -> None:
    """Refuse before embedding anything when the finished graphs (one per embedder) could not fit
    in memory: better than days of embedding and then an out-of-memory kill at the graph stage."""
    need, total = sum(estimated_memory(count, dim, m) for dim in dims), physical_memory()
    if total and need > MAX_RAM_SHARE * total:
        raise IndexError_(
            f"The vector index of corpus '{corpus_name}' would need about {need / 1e9:.1f} GB of "
            f"memory for {count:,} passages; this machine has {total / 1e9:.1f} GB in all.",
            hint="Split the source into smaller corpora, or build on a machine with more memory. "
                 "Keyword search (the bm25 retriever in the settings) needs no vector index.")


@contextmanager
def _disk_full_is_resumable(corpus_name: str, shards: ShardStore):
    """Turn a full disk into an ``IndexError_`` that says what was kept: every finished shard
    (and the previous graph, which saves never overwrite with a partial file)."""
    try:
        yield
    except OSError as exc:
        if not is_disk_full(exc):
            raise
        try:
            kept = f"the {shards.summary().vectors:,} passages embedded so far are kept"
        except IndexError_:
            kept = "finished embedding checkpoints are kept"
        raise IndexError_(f"Disk full while building the index of corpus '{corpus_name}'; {kept}.",
                          hint=f"Free some disk space, then run: searchain corpus index {corpus_name} "
                          "(it continues where it stopped).") from exc


def _open_existing_graph(layout: IndexLayout, corpus_name: str, owner: dict, dim: int, r):
    """``(graph, its max id, rebuilt)``: the saved graph to extend, or ``(None, 0, True)``
    when there is none or it cannot be trusted (the shards rebuild it, nothing is re-embedded)."""
    if not layout.meta_file.exists():
        return None, 0, True
    try:
        meta = IndexMeta.read(layout.meta_file, corpus_name)
    except IndexError_:
        return None, 0, True
    if (meta.embedder, meta.doc_format) != (owner["embedder"], owner["doc_format"]) or \
            meta.dim != dim or graph_problem(layout.hnsw_file, meta, verify_checksum=True):
        return None, 0, True
    try:
        graph = HnswIndex.load(layout.hnsw_file, dim, expected_sha256=None, m=meta.hnsw_m,
                               ef_construction=meta.hnsw_ef_construction, ef=r.hnsw_ef_search)
    except IndexError_:
        return None, 0, True
    graph.deleted = max(0, graph.count - meta.count)
    return graph, meta.max_id, False


def _mark_deleted(graph: HnswIndex, live_ids: np.ndarray) -> int:
    """Mark graph labels whose passage left the corpus; returns how many were newly marked."""
    gone = np.setdiff1d(graph.labels(), live_ids)
    return graph.mark_deleted(gone)
