"""The embedding step of an index build on a Ray cluster (the optional ``cluster`` extra).

``searchain corpus index NAME --ray auto|HOST:PORT`` hands the embedding of a build to Ray
(``pip install 'searchain-desktop[cluster]'``, which brings ``ray[data]``)::

    passage ids to embed ──> Ray Data: reader actor ──> embedding actors ──> vectors, in id order
       (this process)         (on this machine:          (anywhere on the        │
                               reads passages.db)         cluster: one per GPU,   ▼
                                                          else one per CPU)    the same checkpoint
                                                                               shards (shards.py)

The reader is pinned to this machine because the passages are here; the embedding actors
(``ray_workers``) each hold an ``Embedder`` (the same class, model resolution and precision as a local build); Ray Data
streams blocks between them with back-pressure and returns them in order. The vectors are cut
into shards exactly where a local build cuts them, so resume, repair, the graph stage, and even
switching between Ray and a local build from one run to the next work unchanged. Progress events
arrive per block; cancel is honoured between blocks and keeps every complete shard.

Addresses: ``auto`` joins the cluster this machine belongs to (``ray start`` here, or
``RAY_ADDRESS``), and otherwise starts a private local Ray for this build (no dashboard, a small
object store, its logs under the cache folder) that is shut down afterwards. ``HOST:PORT`` is a
cluster's address; this machine must be one of its nodes (``ray start --address=HOST:PORT``),
since the reader runs here. Ray Client addresses (``ray://``) are refused for that reason. An
address nobody answers at is reported at once (``RayUnavailable``), before any model is loaded.
"""

from __future__ import annotations

import logging
import math
import os
import socket
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...errors import Cancelled, IndexError_, SearchainError
from ...events import Progress, check, emit
from .builder import EmbedJob
from .ray_workers import EmbedWorker, PassageReader

INSTALL_HINT = "Install the cluster extra: pip install 'searchain-desktop[cluster]' (it brings ray[data])."
OBJECT_STORE_BYTES = 256 * 1024 * 1024  # a local instance's; blocks are a few MB each
BLOCK_PASSAGES = 1024  # passages per Ray Data block: progress and cancel come this often
MIN_BLOCK, BLOCKS_PER_WORKER = 32, 4  # a small job: blocks of at least 32, about 4 per worker
CONNECT_TIMEOUT_S = 5.0
ACTOR_START_TIMEOUT_S = 600  # for every embedding worker to load its model
KEPT_SESSIONS = 3  # logs of the last few private Ray instances stay for a look after a failure
_MAX_TEMP_DIR = 48  # Ray's socket paths under it must stay below the OS's 107-character limit


@dataclass(frozen=True)
class RayOptions:
    address: str = "auto"  # auto | HOST:PORT
    workers: int | None = None  # embedding actors; None: one per GPU if any, else one per CPU
    device: str = "auto"  # auto (GPUs when the cluster has them) | cpu | cuda
    cpus_per_worker: int = 1  # CPU actors: cores (and torch threads) each
    block_size: int = BLOCK_PASSAGES
    local_cpus: int | None = None  # CPUs of a private local instance (default: this machine's)


@dataclass(frozen=True)
class WorkerPlan:
    workers: int
    device: str  # cpu | cuda
    cpus: float  # per worker
    gpus: float  # per worker

    def describe(self) -> str:
        unit = "GPU" if self.device == "cuda" else f"{self.cpus:g} CPU"
        return f"{self.workers} Ray worker{'s' if self.workers != 1 else ''} ({unit} each)"


class RayUnavailable(IndexError_):
    """No Ray cluster answers at the address given (a local build is the way out)."""


class RayEmbedding:
    """An ``embed_missing`` strategy for ``build_index`` (see the module docstring)::

        with RayEmbedding(RayOptions("auto"), temp_dir=ray_temp_dir(paths)) as on_ray:
            build_index(paths, settings, name, embed_missing=on_ray)

    Entering connects (or starts a local instance); leaving disconnects, shutting down what it
    started. A Ray session that is already running in this process is used and left running.
    """

    def __init__(self, options: RayOptions | None = None, *, temp_dir: Path | None = None,
                 corpus_name: str = ""):
        self.options = options or RayOptions()
        self.temp_dir = temp_dir
        self.corpus_name = corpus_name
        self._ray = None
        self._owned = False
        self.workers_seen: set[str] = set()  # the actors that embedded in the last call

    # -- connecting ---------------------------------------------------------------------------
    def __enter__(self) -> "RayEmbedding":
        self.connect()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def connect(self) -> None:
        if self._ray is not None:
            return
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # runtime is offline
        try:
            import ray
            import ray.data  # noqa: F401 - the extra must bring Ray Data, not only Ray core
        except ImportError as exc:
            raise IndexError_(f"Building on a Ray cluster needs Ray, which is not installed ({exc}).",
                              hint=INSTALL_HINT) from exc
        if not ray.is_initialized():
            self._init(ray)
            self._owned = True
        self._ray = ray

    def _init(self, ray) -> None:
        common = dict(log_to_driver=False, logging_level=logging.ERROR)
        address = self.options.address.strip()
        if address == "auto" and os.environ.get("RAY_ADDRESS"):
            address = os.environ["RAY_ADDRESS"].strip()
        if address == "auto":
            try:
                ray.init(address="auto", **common)  # a cluster this machine is part of
                return
            except ConnectionError:
                pass
            temp = self.temp_dir or ray_temp_dir(None)
            temp.mkdir(parents=True, exist_ok=True)
            prune_sessions(temp)
            ray.init(num_cpus=self.options.local_cpus or os.cpu_count() or 1, include_dashboard=False,
                     object_store_memory=OBJECT_STORE_BYTES, _temp_dir=str(temp), **common)
            return
        if address.startswith("ray://"):
            raise IndexError_(f"Ray Client addresses ({address}) cannot be used: the passages are "
                              "read on this machine, so it must be a node of the cluster.",
                              hint="Join the cluster first (ray start --address=HEAD:6379), then use "
                                   "--ray HEAD:6379, or --ray auto.")
        self._probe(address)
        try:
            ray.init(address=address, **common)
        except (ConnectionError, TimeoutError, RuntimeError) as exc:
            raise self._unavailable(address, str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from exc

    def _probe(self, address: str) -> None:
        """Fail in seconds, not minutes, when nothing listens at ``address``."""
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise IndexError_(f"'{address}' is not a Ray address.",
                              hint="Use HOST:PORT (the head node's address, e.g. 10.0.0.5:6379) or auto.")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S):
                pass
        except OSError as exc:
            raise self._unavailable(address, exc.strerror or str(exc)) from exc

    def _failure(self, exc: Exception, writer: "ShardWriter") -> IndexError_:
        """What a Ray failure was, in one line (the innermost error in Ray's long message)."""
        lines = str(exc).splitlines() or [type(exc).__name__]
        cause = next((line.split("Error: ", 1)[1].strip() for line in reversed(lines) if "Error: " in line),
                     lines[0].strip())
        logs = f" Ray's logs: {self.temp_dir / 'session_latest' / 'logs'}." if self._owned and self.temp_dir else ""
        name = self.corpus_name or "NAME"
        return IndexError_(f"Embedding on Ray failed after {writer.written:,} passages: {cause}",
                           hint=f"The shards written so far are kept. Each node needs SearChain with the "
                                f"cluster extra and the embedding model; fix the cause and run the command "
                                f"again, or build here: searchain corpus index {name}.{logs}")

    def _unavailable(self, address: str, why: str) -> RayUnavailable:
        local = f"searchain corpus index {self.corpus_name or 'NAME'}"
        return RayUnavailable(f"No Ray cluster answers at {address} ({why}).",
                              hint=f"Check the address and that the cluster is up (ray status on its "
                                   f"head node), or build on this machine instead: {local}")

    def close(self) -> None:
        if self._ray is not None and self._owned:
            self._ray.shutdown()
        self._ray, self._owned = None, False

    # -- who embeds ---------------------------------------------------------------------------
    def plan(self) -> WorkerPlan:
        """How many embedding actors, on which device, from the cluster's resources."""
        self.connect()
        resources = self._ray.cluster_resources()
        gpus, cpus = int(resources.get("GPU", 0)), int(resources.get("CPU", 0))
        opts = self.options
        use_gpu = opts.device.startswith("cuda") or (opts.device == "auto" and gpus > 0)
        if use_gpu:
            if gpus == 0:
                raise IndexError_("Embedding on CUDA was asked for, but the Ray cluster has no GPU.",
                                  hint="Set retrieval.embed_device to auto or cpu, or add GPU nodes.")
            workers = opts.workers or gpus
            if workers > gpus:
                raise IndexError_(f"{workers} GPU workers were asked for; the Ray cluster has {gpus} GPUs.",
                                  hint=f"Use --ray-workers {gpus} or fewer.")
            return WorkerPlan(workers, "cuda", 1.0 if cpus >= workers else 0.0, 1.0)
        per = max(1, opts.cpus_per_worker)
        workers = opts.workers or max(1, cpus // per)
        if workers * per > cpus:
            raise IndexError_(f"{workers} workers of {per} CPU were asked for; the Ray cluster has "
                              f"{cpus} CPUs.", hint=f"Use --ray-workers {max(1, cpus // per)} or fewer.")
        return WorkerPlan(workers, "cpu", float(per), 0.0)

    # -- the embed_missing strategy -----------------------------------------------------------
    def __call__(self, job: EmbedJob) -> tuple[int, int]:
        self.connect()
        if job.total == 0:
            return 0, 0
        plan = self.plan()
        ranges = id_ranges(job.store.conn, job.after_id, block_size_for(job.total, plan.workers,
                                                                        self.options.block_size))
        if not ranges:
            return 0, 0
        emit(job.on_event, Progress(job.stage, 0, job.total, f"embedding on {plan.describe()}"))
        data = self._ray.data
        context = data.DataContext.get_current()
        saved = (context.execution_options.preserve_order, context.enable_progress_bars,
                 context.wait_for_min_actors_s)
        context.execution_options.preserve_order = True  # shards must be written in id order
        context.enable_progress_bars = False
        # Hand out blocks once every worker has loaded its model (else the first one ready takes
        # them all), and fail clearly, not hang, when the cluster cannot start them.
        context.wait_for_min_actors_s = ACTOR_START_TIMEOUT_S
        quiet = logging.getLogger("ray.data")
        saved_level = quiet.level
        quiet.setLevel(logging.ERROR)
        try:
            return self._run(job, plan, ranges), 0  # no characters embedded in this process
        finally:
            (context.execution_options.preserve_order, context.enable_progress_bars,
             context.wait_for_min_actors_s) = saved
            quiet.setLevel(saved_level)

    def _run(self, job: EmbedJob, plan: WorkerPlan, ranges: list[tuple[int, int]]) -> int:
        ray, data = self._ray, self._ray.data
        embedder = job.embedder
        dataset = (
            # One block per range, so that the blocks spread over the workers.
            data.from_items([{"lo": lo, "hi": hi} for lo, hi in ranges], override_num_blocks=len(ranges))
            .map_batches(PassageReader, batch_size=1, compute=data.ActorPoolStrategy(size=1),
                         num_cpus=0, **_on_this_node(ray, data),
                         fn_constructor_kwargs={"db": str(job.store.path), "corpus": self.corpus_name})
            .map_batches(EmbedWorker, batch_size=self.options.block_size,
                         compute=data.ActorPoolStrategy(size=plan.workers, max_tasks_in_flight_per_actor=1),
                         num_cpus=plan.cpus, num_gpus=plan.gpus,
                         fn_constructor_kwargs={
                             "name": embedder.name, "device": plan.device,
                             "models_dir": str(embedder.models_dir) if embedder.models_dir else "",
                             "precision": embedder.precision, "batch_size": embedder.cpu_batch_size,
                             "gpu_batch_size": embedder.gpu_batch_size, "threads": int(plan.cpus) or 1})
        )
        writer = ShardWriter(job)
        self.workers_seen = set()
        batches = iter(dataset.iter_batches(batch_size=None, batch_format="numpy"))
        try:
            for batch in batches:
                writer.add(batch["id"], batch["vector"])
                self.workers_seen.update(batch["worker"].tolist())
                emit(job.on_event, Progress(job.stage, writer.received, job.total))
                check(job.cancel)
            writer.finish()
        except (Cancelled, SearchainError, OSError):
            raise
        except Exception as exc:  # Ray's errors (a worker that died, a model missing on a node)
            raise self._failure(exc, writer) from exc
        finally:
            close = getattr(batches, "close", None)
            if close is not None:
                close()  # stops the pipeline when cancelled midway
        return writer.written


def _on_this_node(ray, data) -> dict:
    """``map_batches`` arguments that keep an operator's workers on this machine (where the
    passages are): a node-id label selector where Ray Data takes one, else a hard node affinity."""
    import inspect

    node = ray.get_runtime_context().get_node_id()
    if "label_selector" in inspect.signature(data.Dataset.map_batches).parameters:
        return {"label_selector": {"ray.io/node-id": node}}
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return {"scheduling_strategy": NodeAffinitySchedulingStrategy(node_id=node, soft=False)}


class ShardWriter:
    """Cuts vectors arriving in id order into shards of ``job.shard_size``, exactly where a
    local build would cut them; an unfinished last shard is written only by ``finish``."""

    def __init__(self, job: EmbedJob):
        self.job = job
        self.seq = job.shards.next_seq()
        self.ids: list[np.ndarray] = []
        self.vectors: list[np.ndarray] = []
        self.pending = 0
        self.received = 0
        self.written = 0

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        self.ids.append(np.asarray(ids, dtype=np.int64))
        self.vectors.append(np.asarray(vectors, dtype=np.float32))
        self.pending += len(ids)
        self.received += len(ids)
        while self.pending >= self.job.shard_size:
            self._write(self.job.shard_size)

    def finish(self) -> None:
        if self.pending:
            self._write(self.pending)

    def _write(self, n: int) -> None:
        ids, vectors = np.concatenate(self.ids), np.concatenate(self.vectors)
        self.job.shards.write(self.seq, ids[:n], vectors[:n])
        self.seq += 1
        self.written += n
        self.ids, self.vectors = [ids[n:]], [vectors[n:]]
        self.pending -= n


def block_size_for(total: int, workers: int, largest: int) -> int:
    """Passages per block: ``largest`` for a large job, smaller for a small one so that every
    worker still gets a few blocks (a block is the unit Ray hands to one worker)."""
    return max(1, min(largest, max(MIN_BLOCK, math.ceil(total / (BLOCKS_PER_WORKER * workers)))))


def id_ranges(conn: sqlite3.Connection, after_id: int, block: int) -> list[tuple[int, int]]:
    """``(lo, hi]`` id ranges of ``block`` passages each, covering every id above ``after_id``."""
    ranges, lo, count, last = [], after_id, 0, after_id
    cursor = conn.execute("SELECT id FROM passages WHERE id > ? ORDER BY id", (after_id,))
    while rows := cursor.fetchmany(65536):
        for (pid,) in rows:
            count, last = count + 1, pid
            if count == block:
                ranges.append((lo, last))
                lo, count = last, 0
    if count:
        ranges.append((lo, last))
    return ranges


def ray_temp_dir(paths) -> Path:
    """Where a private local Ray keeps its session and logs: the cache folder when its path is
    short enough for Ray's sockets, else a per-user folder in the system temp directory."""
    if paths is not None:
        preferred = Path(paths.cache_dir) / "ray"
        if len(str(preferred)) <= _MAX_TEMP_DIR:
            return preferred
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    return Path(tempfile.gettempdir()) / f"searchain-ray-{uid}"


def prune_sessions(temp: Path, keep: int = KEPT_SESSIONS) -> None:
    """Remove all but the newest ``keep`` session folders (logs) of earlier private instances."""
    import shutil

    sessions = sorted((p for p in temp.glob("session_2*") if p.is_dir() and not p.is_symlink()),
                      key=lambda p: p.stat().st_mtime)
    for old in sessions[:-keep] if keep else sessions:
        shutil.rmtree(old, ignore_errors=True)
