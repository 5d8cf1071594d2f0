"""What an index build will cost on this machine, said before it starts.

``plan_build`` counts what each embedding model still has to embed, measures the model's speed
on this device with a short calibration run over the corpus's own passages (cached per model,
device, precision, batch size and machine in ``<cache>/embed-speed.json``, so only the first plan
on a machine pays for it), and adds the disk and memory the new vectors and graph will take.
The CLI prints the plan (``searchain corpus index NAME --plan [--json]``) and the corpus manager
shows it; a build estimated at over an hour is started only after the user agrees
(``NEEDS_CONFIRMATION_S``). ``advice`` says what would make the build faster here: a GPU, or
leaving out the second embedding model.
"""

from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ...errors import ModelError
from ...events import CancelToken, EventCallback, Progress, emit
from ...files import free_bytes
from ...units import duration, size
from ..layout import IndexLayout

NEEDS_CONFIRMATION_S = 3600
PLAN_STAGE = "plan"
CACHE_FILE = "embed-speed.json"
MIN_RECORDED_PASSAGES = 512  # a build shorter than this says little about the speed
# Fixed costs the calibration does not see: the model load, the graph's final save.
MODEL_BYTES_PER_DIM = 600_000  # ~ weights + activations in RAM per output dimension (MiniLM 0.2 GB, mpnet 0.45 GB)
# Compact-index rows per second per core: 1M vectors (k-means training + fast-scan codes) in 345 s
# on 2 shared cores (BENCHMARKS.md, Scale); the former hnswlib graph managed ~1000.
GRAPH_INSERTS_PER_CORE_S = 1500
# GPU throughput measured on an H100 (BENCHMARKS.md, GPU embedding), for the advice line only.
GPU_PASSAGES_PER_S = {"sentence-transformers/all-MiniLM-L6-v2": 3300,
                      "sentence-transformers/all-mpnet-base-v2": 3200}


@dataclass(frozen=True)
class ModelPlan:
    model: str  # the embedder's model id
    role: str  # "first" | "second"
    device: str
    precision: str
    passages: int  # still to embed
    passages_per_s: float
    est_seconds: float
    calibrated: str  # "now" | "cached": where passages_per_s came from


@dataclass(frozen=True)
class BuildPlan:
    corpus: str
    passages: int  # in the corpus
    models: tuple[ModelPlan, ...]
    graph_seconds: float
    disk_bytes: int  # what the build will add on disk
    ram_bytes: int  # the build's peak memory
    free_disk_bytes: int | None = None
    advice: tuple[str, ...] = field(default_factory=tuple)
    notes: tuple[str, ...] = field(default_factory=tuple)  # e.g. a second model that will be left out
    keyword_seconds: float = 0.0  # the tantivy keyword index of a large corpus (``_keyword_cost``)

    @property
    def est_seconds(self) -> float:
        return sum(m.est_seconds for m in self.models) + self.graph_seconds + self.keyword_seconds

    @property
    def needs_confirmation(self) -> bool:
        return self.est_seconds > NEEDS_CONFIRMATION_S

    def to_dict(self) -> dict:
        data = asdict(self)
        data["models"] = [{"name": m.pop("model"), **m, "passages_per_s": round(m["passages_per_s"], 2),
                           "est_seconds": round(m["est_seconds"], 1)} for m in data["models"]]
        data.update(est_seconds=round(self.est_seconds, 1), needs_confirmation=self.needs_confirmation)
        return data

    def summary(self) -> str:
        """A few lines for a person: what, how long, how much disk and memory, what would help."""
        todo = [m for m in self.models if m.passages]
        if not todo and not self.keyword_seconds:
            lines = [f"The index of '{self.corpus}' is up to date ({self.passages:,} passages)."]
        else:
            lines = [f"Index build of '{self.corpus}' ({self.passages:,} passages): about "
                     f"{duration(self.est_seconds)} on this machine."]
            for m in todo:
                lines.append(f"  {m.model}: {m.passages:,} passages on {m.device} ({m.precision}), "
                             f"{m.passages_per_s:,.0f}/s, about {duration(m.est_seconds)}")
            if self.graph_seconds >= 60:
                lines.append(f"  search graph: about {duration(self.graph_seconds)}")
            if self.keyword_seconds >= 60:
                lines.append(f"  keyword index (tantivy): about {duration(self.keyword_seconds)}")
        lines.append(f"  disk: +{size(self.disk_bytes)}"
                     + (f" ({size(self.free_disk_bytes)} free)" if self.free_disk_bytes is not None else "")
                     + f"; memory: {size(self.ram_bytes)} at the peak")
        lines += [f"  faster: {a}" for a in self.advice]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


# -- planning ------------------------------------------------------------------------------------
def plan_build(paths, settings, corpus_name: str, *, rebuild: bool = False, embedder=None,
               second_embedder=None, on_event: EventCallback | None = None,
               cancel: CancelToken | None = None) -> BuildPlan:
    """The plan for ``build_index(paths, settings, corpus_name, rebuild=rebuild)`` (see above)."""
    from ...corpus.manager import CorpusManager
    from ..embed.embedder import Embedder
    from ..embed.second import second_embedder_name
    from .shards import ShardStore

    r = settings.retrieval
    manager = CorpusManager(paths, settings)
    layout = IndexLayout(manager.corpus_dir(corpus_name) / "index")
    with manager.open_store(corpus_name) as store:
        total = store.count()
        embedder = embedder or Embedder.for_settings(r, models_dir=paths.models_dir)
        second_name = second_embedder_name(r, paths.models_dir, passages=total)
        if second_embedder is None and second_name:
            second_embedder = Embedder.for_settings(r, second_name, models_dir=paths.models_dir)
        if not second_name:
            second_embedder = None
        cache = SpeedCache(paths.cache_dir / CACHE_FILE)
        plans, graph_s, disk, graph_ram, model_ram, notes = [], 0.0, 0, 0, 0, []
        for role, emb, where in (("first", embedder, layout), ("second", second_embedder, layout.second)):
            if emb is None:
                continue
            if role == "second":
                try:
                    emb.dim  # loads it: the build leaves out a second model that cannot load
                except ModelError as exc:
                    notes.append(f"the second embedding model will be left out: {exc.message}")
                    continue
            done_id = 0 if rebuild else _embedded_up_to(ShardStore(where, corpus_name), emb)
            todo = _count_after(store, done_id)
            emit(on_event, Progress(PLAN_STAGE, 0, 0, f"measuring {emb.model_id} on this machine"))
            pps, source = _speed(emb, store, done_id, cache, cancel)
            plans.append(ModelPlan(emb.model_id, role, emb.effective_device, emb.effective_precision,
                                   todo, pps, todo / pps if pps > 0 else 0.0, source))
            dim = emb.dim
            fresh = rebuild or _codes_retrained(where, corpus_name, total, dim, todo)
            new_vectors = total if fresh else todo
            index = _index_bytes(total, dim)
            disk += todo * (4 * dim + 8) + index["disk"]
            graph_ram = max(graph_ram, index["ram_build" if fresh or not todo else "ram_extend"])
            model_ram = max(model_ram, MODEL_BYTES_PER_DIM * dim)
            graph_s += new_vectors / (GRAPH_INSERTS_PER_CORE_S * max(1, os.cpu_count() or 1))
        keyword_s, keyword_disk = _keyword_cost(store, r.bm25_title_weight, rebuild)
    plan = BuildPlan(corpus_name, total, tuple(plans), round(graph_s, 1), int(disk + keyword_disk),
                     int(graph_ram + model_ram + 256e6), free_bytes(layout.root),
                     tuple(_advice(plans, r)), tuple(notes), keyword_seconds=round(keyword_s, 1))
    # Not the plan's headline: whoever asked for the plan shows it next (the CLI printed it twice).
    emit(on_event, Progress(PLAN_STAGE, 1, 1, f"measured on this machine: about {duration(plan.est_seconds)}"))
    return plan


def _keyword_cost(store, title_weight: float, rebuild: bool) -> tuple[float, int]:
    """Seconds and disk of the tantivy keyword index the build makes or extends for a corpus
    this large (``bm25.tantivy_index.ensure_current``): every passage, or those added since."""
    from ...errors import IndexError_
    from ..bm25 import tantivy_index as tv
    from ..bm25.tantivy_schema import build_cost
    from ..bm25.tantivy_update import extendable

    total = store.count()
    if total < tv.TANTIVY_FROM_PASSAGES:
        return 0.0, 0
    path = tv.index_dir(store.path)
    old = None
    if not rebuild:
        try:
            if tv.is_current(path, store.conn, title_weight):
                return 0.0, 0
            old = extendable(path, store.conn, title_weight)
        except IndexError_:  # damaged: rebuilt
            old = None
    return build_cost(total if old is None else _count_after(store, old["max_id"]))


def _codes_retrained(layout: IndexLayout, corpus_name: str, total: int, dim: int, todo: int) -> bool:
    """Whether the index step makes codes for every vector (no finished index, codes that
    ``compact.needs_retraining`` replaces, or codes too big to grow here) rather than for the
    ``todo`` new ones only."""
    from ...errors import IndexError_
    from .budget import index_memory_limit
    from ..ann.compact import extension_fits, needs_retraining
    from ..layout import IndexMeta

    if not layout.meta_file.exists():
        return True
    try:
        meta = IndexMeta.read(layout.meta_file, corpus_name)
    except IndexError_:
        return True
    return meta.outdated or needs_retraining(meta.spec, total, dim, max(0, meta.rows - meta.count)) or \
        (todo > 0 and not extension_fits(meta.rows + todo, dim, index_memory_limit()))


def _embedded_up_to(shards, embedder) -> int:
    """The largest passage id already checkpointed by ``embedder`` (0: none, or another model's)."""
    from ...errors import IndexError_
    from ..layout import DOC_FORMAT

    try:
        if shards.owner() != {"embedder": embedder.model_id, "doc_format": DOC_FORMAT}:
            return 0
        return shards.summary().max_id
    except IndexError_:
        return 0


def _count_after(store, after_id: int) -> int:
    return store.conn.execute("SELECT count(*) FROM passages WHERE id > ?", (after_id,)).fetchone()[0]


def _index_bytes(count: int, dim: int) -> dict:
    """Disk and memory of the vector index over ``count`` vectors (``compact``'s own estimate)."""
    from ..ann.compact import estimated_index_bytes

    return estimated_index_bytes(count, dim)




def _advice(plans: list[ModelPlan], r) -> list[str]:
    out = []
    slow = [m for m in plans if m.passages and m.est_seconds > 600]
    if any(m.device == "cpu" for m in slow):
        from ..embed.device import cuda_status

        usable, why = cuda_status()
        cpu = [m for m in slow if m.device == "cpu"]
        if usable:
            out.append(f"a CUDA GPU is here ({why}) but retrieval.embed_device is cpu: set it to auto")
        else:
            speedups = [GPU_PASSAGES_PER_S[m.model] / m.passages_per_s for m in cpu
                        if m.model in GPU_PASSAGES_PER_S and m.passages_per_s > 0]
            gain = (" much faster" if not speedups else f" about {min(speedups):.0f} times faster"
                    if min(speedups) < 1000 else " over a thousand times faster")
            out.append(f"an NVIDIA GPU with a CUDA build of torch embeds{gain} (measured on an "
                       "H100; README, 'GPU embedding')")
    second = [m for m in plans if m.role == "second" and m.passages]
    if second and second[0].est_seconds > 60:
        out.append(f"leaving out the second embedding model saves about {duration(second[0].est_seconds)} "
                   "(retrieval.second_embedder = \"\")")
    return out


# -- measuring --------------------------------------------------------------------------------------
def machine_signature(device: str) -> str:
    """Names the hardware a speed was measured on, so a cached figure is never used elsewhere."""
    if device.startswith("cuda"):
        import torch

        return f"{torch.cuda.get_device_name(0)}"
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            model = next((line.partition(":")[2].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    return f"{model} x{os.cpu_count()}"


class SpeedCache:
    """Measured passages/s per (model, device, precision, batch, machine), in one JSON file."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def _read(self) -> dict:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}  # missing or damaged: measure again

    def get(self, key: str) -> dict | None:
        entry = self._read().get(key)
        return entry if isinstance(entry, dict) and entry.get("passages_per_s", 0) > 0 else None

    def put(self, key: str, entry: dict) -> None:
        from ...files import atomic_write_text

        data = self._read()
        data[key] = entry
        try:
            atomic_write_text(self.path, json.dumps(data, indent=2))
        except OSError:
            pass  # a read-only cache only costs a new calibration next time


def _speed_key(embedder) -> str:
    return "|".join([embedder.model_id, embedder.effective_device, embedder.effective_precision,
                     str(embedder.batch_size), machine_signature(embedder.effective_device)])


def record_speed(paths, embedder, passages: int, seconds: float, chars: int) -> None:
    """Keep the speed a real build measured (``passages`` in ``seconds``), so the next plan on
    this machine starts from it: a calibration of a few batches can catch a busy moment."""
    if passages < MIN_RECORDED_PASSAGES or seconds <= 0:
        return
    SpeedCache(paths.cache_dir / CACHE_FILE).put(_speed_key(embedder), {
        "passages_per_s": round(passages / seconds, 2), "chars": round(chars / passages, 1),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"), "passages": passages, "source": "build"})


def _speed(embedder, store, after_id: int, cache: SpeedCache, cancel) -> tuple[float, str]:
    """Passages/s of ``embedder`` on the passages it will embed (a cached figure scaled to their
    length when this machine measured it before, else a calibration run now)."""
    from ...events import check
    from ..layout import doc_text

    sample = [doc_text(p) for batch in store.iter_batches(after_id=after_id, batch_size=256)
              for _, p in batch][:256] or [doc_text(p) for batch in store.iter_batches(batch_size=256)
                                           for _, p in batch][:256]
    if not sample:
        return 0.0, "now"
    chars = sum(map(len, sample)) / len(sample)
    key = _speed_key(embedder)
    cached = cache.get(key)
    if cached:
        # Embedding cost grows with text length; scale the cached speed to these passages.
        ratio = min(2.0, max(0.5, cached.get("chars", chars) / chars))
        return cached["passages_per_s"] * ratio, "cached"
    check(cancel)
    batch = embedder.batch_size
    n = min(len(sample), max(64, 4 * batch))
    texts = (sample * (n // len(sample) + 1))[:n]
    embedder.encode(texts[:batch])  # warm-up: first calls allocate and compile
    started = time.perf_counter()
    embedder.encode(texts)
    pps = len(texts) / max(1e-6, time.perf_counter() - started)
    cache.put(key, {"passages_per_s": round(pps, 2), "chars": round(chars, 1),
                    "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"), "passages": len(texts)})
    return pps, "now"
