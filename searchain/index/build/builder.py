"""Build a corpus's vector index: resumable, incremental, atomic.

1. Embed: passages with an id above the largest id already checkpointed are read from the
   store in shard-sized batches, embedded, and written as one shard each (``shards.py``).
   A build killed at any point resumes after the last complete shard.
2. Index (``compact_build.py``): if a valid compact index exists, the new shards' vectors
   get codes (nothing old is re-embedded or re-encoded); otherwise codes are trained and made
   from all shards, resuming a killed run from its checkpoint. Passages deleted from the corpus
   are hidden. An index of format 1 (an hnswlib graph) is converted the same way.
3. Save: every index file is written to a temp file and renamed, then ``meta.json`` (also
   atomic) records the embedder, dimension, counts, index spec and the codes' SHA-256.
"""

from __future__ import annotations

import logging
import shutil
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np

from ...config import AppPaths, Settings
from ...errors import IndexError_, ModelError, is_disk_full
from ...events import CancelToken, EventCallback, Progress, check, emit
from ...machine import total_memory_bytes
from ..ann.compact import estimated_index_bytes
from ..bm25 import tantivy_index as bm25_tantivy
from ..embed.embedder import Embedder
from ..embed.second import second_embedder_name
from ..layout import DOC_FORMAT, IndexLayout, doc_text, rebuild_hint
from ..status import mismatch_message
from .budget import MAX_RAM_SHARE, index_memory_limit
from .compact_build import build_compact
from .shards import ShardStore

log = logging.getLogger("searchain.index")
DEFAULT_SHARD_SIZE = 4096
# On a GPU each shard drains the embedding pipeline once: larger shards keep it full (BENCHMARKS.md).
GPU_SHARD_SIZE = 32768
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


def default_shard_size(device: str) -> int:
    """Passages per embedding checkpoint: each shard drains a GPU's tokenise-ahead pipeline once,
    so on a GPU shards are 8 times larger (MiniLM's build stage: 0.87 of bare encode's speed at
    4,096, 1.16 at 32,768 on an H100); on a CPU a smaller shard loses less to a kill."""
    return GPU_SHARD_SIZE if device.startswith("cuda") else DEFAULT_SHARD_SIZE


def build_index(paths: AppPaths, settings: Settings, corpus_name: str, *, rebuild: bool = False,
                on_event: EventCallback | None = None, cancel: CancelToken | None = None,
                embedder: Embedder | None = None, second_embedder: Embedder | None = None,
                shard_size: int | None = None,
                embed_missing: EmbedMissing | None = None) -> IndexReport:
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

    ``embed_missing`` replaces the embedding step (default ``embed_here``: this process), e.g.
    with a Ray cluster (``ray_embed.RayEmbedding``); whatever embeds, it writes the same shards.
    """
    from ...corpus.manager import CorpusManager

    with CorpusManager(paths, settings).build_lock(corpus_name):
        return _build_index(paths, settings, corpus_name, rebuild=rebuild, on_event=on_event, cancel=cancel,
                            embedder=embedder, second_embedder=second_embedder, shard_size=shard_size,
                            embed_missing=embed_missing)


def _build_index(paths: AppPaths, settings: Settings, corpus_name: str, *, rebuild: bool, on_event, cancel,
                 embedder, second_embedder, shard_size, embed_missing) -> IndexReport:
    from ...corpus.manager import CorpusManager

    started = time.perf_counter()
    r = settings.retrieval
    embedder = embedder or Embedder.for_settings(r, models_dir=paths.models_dir)
    shard_size = shard_size or default_shard_size(embedder.effective_device)
    manager = CorpusManager(paths, settings)
    layout = IndexLayout(manager.corpus_dir(corpus_name) / "index")
    with manager.open_store(corpus_name) as store:  # auto's choice depends on the corpus's size
        wanted_second = second_embedder_name(r, paths.models_dir, passages=store.count())
    if not wanted_second:
        second_embedder = None
    elif second_embedder is None:
        second_embedder = Embedder.for_settings(r, wanted_second, models_dir=paths.models_dir)

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
        _check_memory(corpus_name, store.count(), dims)
        if rebuild:
            shutil.rmtree(layout.root, ignore_errors=True)
            shutil.rmtree(bm25_tantivy.index_dir(store.path), ignore_errors=True)
        # Large corpora: the keyword index that keeps BM25 fast (bm25_tantivy.py); small ones use
        # FTS5. First, since it takes minutes where embedding takes hours or days: until the
        # vector index is finished, questions are answered by keyword search (``KeywordOnly``).
        bm25_tantivy.ensure_current(store, r.bm25_title_weight, on_event=on_event, cancel=cancel)
        first = _build_layout(store, corpus_name, layout, embedder, r, on_event, cancel, shard_size,
                              stages=(EMBED_STAGE, GRAPH_STAGE), embed_missing=embed_missing)
        second = None
        if second_embedder is not None:
            if _owner_differs(layout.second, corpus_name, second_embedder):
                shutil.rmtree(layout.second.root, ignore_errors=True)
            second = _build_layout(store, corpus_name, layout.second, second_embedder, r, on_event,
                                   cancel, shard_size, stages=SECOND_STAGES, embed_missing=embed_missing)
    from .plan import record_speed  # real builds keep the plan's speed figures current

    if embed_missing is None:  # a build embedded elsewhere (a cluster) says nothing of this machine
        record_speed(paths, embedder, first.embedded, first.embed_s, first.chars)
        if second is not None:
            record_speed(paths, second_embedder, second.embedded, second.embed_s, second.chars)
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
    chars: int  # characters embedded (the build plan's speed record scales by length)
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
                  on_event, cancel, shard_size: int, *, stages: tuple[str, str],
                  embed_missing: EmbedMissing | None = None) -> _LayoutBuild:
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
        if before.max_id > store.max_id():
            raise IndexError_(f"The index of corpus '{corpus_name}' holds passage ids the corpus "
                              "never had (was the corpus replaced?).", hint=rebuild_hint(corpus_name))

        # -- 1. embed what no shard holds yet ---------------------------------------------
        # Passages committed while this runs (an add in another process) are embedded too: the
        # step reads batches above the last checkpoint until the store has no more.
        t0 = time.perf_counter()
        to_embed = store.conn.execute("SELECT count(*) FROM passages WHERE id > ?",
                                      (before.max_id,)).fetchone()[0]
        emit(on_event, Progress(embed_stage, 0, to_embed, f"embedding {to_embed} passages"
                                + ("" if embed_stage == EMBED_STAGE else f" with {embedder.model_id}")))
        job = EmbedJob(store=store, shards=shards, after_id=before.max_id, total=to_embed,
                       embedder=embedder, shard_size=shard_size, stage=embed_stage,
                       on_event=on_event, cancel=cancel)
        embedded, chars = (embed_missing or embed_here)(job)
        embed_s = time.perf_counter() - t0

        # -- 2. and 3. index and save (compact_build.py) ---------------------------------
        # Which passages are live is read now, after embedding, not at the start: a row
        # committed during the embedding is live and indexed; one committed after this read has
        # no vector yet, so the index reads as stale and the next build embeds it.
        live_ids = np.fromiter((row[0] for row in store.conn.execute("SELECT id FROM passages")),
                               dtype=np.int64)
        t1 = time.perf_counter()
        stage = build_compact(layout, corpus_name, embedder.model_id, embedder.dim, live_ids,
                              stage=graph_stage, on_event=on_event, cancel=cancel,
                              memory_limit=index_memory_limit())
        graph_s = time.perf_counter() - t1
        added, removed, total, rebuilt = stage.added, stage.removed, stage.total, stage.rebuilt
    return _LayoutBuild(embedded=embedded, reused=before.vectors, added=added, chars=chars, removed=removed,
                        total=total, embed_s=embed_s, graph_s=graph_s, rebuilt=rebuilt)


@dataclass(frozen=True)
class EmbedJob:
    """The embedding step of one index: every passage with an id above ``after_id`` (``total``
    of them) gets a vector, written as shards of ``shard_size`` in ascending id order, so that a
    stopped build resumes after the last complete shard. ``stage`` names the progress events."""

    store: object  # PassageStore
    shards: ShardStore
    after_id: int
    total: int
    embedder: Embedder  # its device, precision and batch size are the build's
    shard_size: int
    stage: str
    on_event: EventCallback | None = None
    cancel: CancelToken | None = None


# Does an EmbedJob; returns (passages embedded, characters embedded in this process: 0 elsewhere).
EmbedMissing = Callable[[EmbedJob], tuple[int, int]]


def embed_here(job: EmbedJob) -> tuple[int, int]:
    """Embed in this process, one shard at a time (the default ``embed_missing``)."""
    embedded = chars = 0
    seq = job.shards.next_seq()
    for batch in job.store.iter_batches(after_id=job.after_id, batch_size=job.shard_size):
        check(job.cancel)
        ids = np.array([i for i, _ in batch], dtype=np.int64)
        texts = [doc_text(p) for _, p in batch]
        chars += sum(map(len, texts))
        done_before = embedded

        def relay(ev, done_before=done_before):
            if isinstance(ev, Progress):
                emit(job.on_event, Progress(job.stage, done_before + ev.done, job.total))

        vectors = job.embedder.encode(texts, on_event=relay, cancel=job.cancel)
        job.shards.write(seq, ids, vectors)
        seq += 1
        embedded += len(batch)
    return embedded, chars


def _check_memory(corpus_name: str, count: int, dims: list[int]) -> None:
    """Refuse before embedding anything when building the indexes (one per embedder) could not
    fit in memory: better than days of embedding and then an out-of-memory kill at the index
    stage. With compact codes a full Wikipedia needs ~8 GB
    (21M × 384; BENCHMARKS.md *Scale*)."""
    need = sum(estimated_index_bytes(count, dim)["ram_build"] for dim in dims)
    total = total_memory_bytes()
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
