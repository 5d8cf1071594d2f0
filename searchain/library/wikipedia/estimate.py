"""What getting a Wikipedia will cost on this machine, per stage, said before anything starts.

Known exactly: the download's size (the file list). Estimated: the passages, from the download's
size (``BYTES_PER_PASSAGE``: ~30M passages of ~100 words in English's 11.6 GB of parquet, or its
22 GB ``.xml.bz2``); from them, with the index build plan's own figures (``index.build.plan``):
- download: at ``DOWNLOAD_BYTES_PER_S`` (an assumption: the plan says so);
- ingest: ``ingest_rate``, from measured CPU rates (parsing per core, the one writer, the
  keyword index built at the end; below), with the worker processes ``corpus.ingest_workers``
  gives (auto: every core); store + FTS5 1.3 KB per passage, FTS5 left out from 200,000
  passages where the workers defer it (``fts5_left``: tantivy's index serves keyword search
  there); 135 MB peak (+ one parquet row group; the keyword index build at the end: 130 MB);
- embed: this machine's measured speed for the embedding model when a build or plan measured it
  (``plan.SpeedCache``), else the H100 figure on a usable CUDA GPU, else ~50 passages/s per
  CPU core (MiniLM, bfloat16, BENCHMARKS.md); 4·dim + 8 bytes of shards per passage;
- index: ``GRAPH_INSERTS_PER_CORE_S`` per core; disk and RAM from ``compact.estimated_index_bytes``;
  from 200,000 passages also the tantivy keyword index (``tantivy_schema.build_seconds``: a
  thread per core; 0.17 KB per passage).
Work over ``NEEDS_CONFIRMATION_S`` (an hour) is started only after the user agrees.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path

from ...corpus import fts_build
from ...corpus.fts_build import BUILD_PASSAGES_PER_S, DEFER_FROM_PASSAGES_PER_S
from ...files import free_bytes
from ...machine import cpu_capacity, cpu_cores
from ...units import duration, size
from .remote import Release

BYTES_PER_PASSAGE = {"hub": 390, "dump": 730}
DOWNLOAD_BYTES_PER_S = 25e6
# Ingest rates in passages per CPU second, measured with ``searchain bench ingest --source FILE
# --workers 1,2`` on the 2-core dev VM (BENCHMARKS.md, "Parallel ingest and real dump pages",
# 2026-11-27; CPU seconds, since the shared VM's wall times measure its neighbours). hub: a
# generated parquet file of 20,000 articles with English Wikipedia's lengths (80k passages);
# dump: 1,648 real English pages (gensim's excerpt, repeated) as a multistream dump. One
# process is slower than a worker per passage: it also stores them.
# Dump rates x1.23 (serial) and x1.26 (a worker's CPU) since session 30's stripper guards, measured
# on the same pages before and after (BENCHMARKS.md, "The stripper's guards").
SERIAL_PASSAGES_PER_S = {"hub": 17_000, "dump": 3_400}  # parse and store in one process...
SERIAL_MEASURED_AT = {"hub": 80_000, "dump": 38_700}  # ...over an ingest of this many passages
PARSE_PASSAGES_PER_CORE_S = {"hub": 32_000, "dump": 4_250}  # in a worker, per core
# The one writer in one process (no workers: SQLite + FTS5 batch by batch, the same for every
# source): 20,500 passages/s over a 400k-passage ingest, 23,500 over 80k (FTS5 merges grow with
# the index); the two sizes fit N^-0.083, which ``writer_rate`` carries on to larger corpora (an
# extrapolation: ~14,800/s at 21 M passages).
WRITER_PASSAGES_PER_S = 20_500
WRITER_MEASURED_AT = 400_000
WRITER_SLOWDOWN_EXP = 0.083
# With workers the writer stores passages without FTS5 and builds that index at the end
# (``corpus.fts_build``; BENCHMARKS.md, "The writer without per-batch FTS", at ce68b3f), per
# CPU second: storing (receiving the workers' passages included) 80,400 over a 2 M-passage
# ingest, 84,000 over 400k, 86,900 over 80k (N^-0.027); the build 59,200 over 2 M, 64,700
# over 400k, 69,300 over 80k (N^-0.055), carried on with the per-batch writer's steeper
# N^-0.083 (an assumption, on the safe side: ~48,700/s at 21 M, against ~52,000 by its own fit).
# x1.3 since the workers send rows, not objects (session 33, BENCHMARKS.md "The writer receives
# rows": the writer's CPU a passage 1.31x and 1.32x lower on a dump and on parquet, 240-309k).
STORE_PASSAGES_PER_S = 104_000
FTS_BUILD_PASSAGES_PER_S = BUILD_PASSAGES_PER_S
STORE_FTS_MEASURED_AT = 2_000_000
STORE_SLOWDOWN_EXP = 0.027
STORE_BYTES_PER_PASSAGE = 1300
# FTS5's share of it, which a large ingest that defers it leaves unbuilt (``fts5_left``): 371
# bytes at 240k passages (``bench keyword-left``, BENCHMARKS.md "Large corpora without FTS5"),
# 540 at 1M ("BM25 at scale"); the smaller is taken off, so the disk estimate errs high.
FTS5_BYTES_PER_PASSAGE = 370
INGEST_RAM_BYTES = 300e6
CPU_PASSAGES_PER_CORE_S = 50
SECOND_SLOWER_CPU = 5  # the 768-d second model (mpnet) against MiniLM on CPU
KNOWN_DIMS = {"sentence-transformers/all-MiniLM-L6-v2": 384,
              "sentence-transformers/all-mpnet-base-v2": 768}


@dataclass(frozen=True)
class Stage:
    name: str  # download | ingest | embed | index
    seconds: float
    disk_bytes: int  # what the stage adds on disk
    ram_bytes: int  # its peak memory
    download_bytes: int = 0
    note: str = ""
    device: str = ""  # where the embed stage runs: cuda | cpu


@dataclass(frozen=True)
class GetPlan:
    corpus: str
    lang: str
    source: str
    snapshot: str
    revision: str
    where: str
    files: int
    download_bytes: int  # the whole release
    passages: int  # estimated (or counted, once ingested)
    stages: tuple[Stage, ...]
    free_disk_bytes: int | None
    job: str  # the job folder (downloads, state)
    advice: tuple[str, ...] = ()

    @property
    def est_seconds(self) -> float:
        return sum(s.seconds for s in self.stages)

    @property
    def disk_bytes(self) -> int:
        return sum(s.disk_bytes for s in self.stages)

    @property
    def enough_disk(self) -> bool:
        return self.free_disk_bytes is None or self.disk_bytes <= self.free_disk_bytes

    @property
    def needs_confirmation(self) -> bool:
        from ...index.build.plan import NEEDS_CONFIRMATION_S

        return self.est_seconds > NEEDS_CONFIRMATION_S

    def to_dict(self) -> dict:
        data = asdict(self)
        data["stages"] = [{**s, "seconds": round(s["seconds"], 1)} for s in data["stages"]]
        data.update(est_seconds=round(self.est_seconds, 1), disk_bytes=self.disk_bytes,
                    ram_bytes=max((s.ram_bytes for s in self.stages), default=0),
                    needs_confirmation=self.needs_confirmation, enough_disk=self.enough_disk)
        return data

    def summary(self) -> str:
        lines = [f"Wikipedia ({self.lang}, {self.snapshot}, from {self.where}) as corpus "
                 f"'{self.corpus}': {self.files} file(s), {size(self.download_bytes)}, about "
                 f"{self.passages:,} passages; about {duration(self.est_seconds)} on this machine."]
        for s in self.stages:
            extra = f", download {size(s.download_bytes)}" if s.download_bytes else ""
            lines.append(f"  {s.name:<8} about {duration(s.seconds)}{extra}, disk +{size(s.disk_bytes)}, "
                         f"memory {size(s.ram_bytes)}" + (f" ({s.note})" if s.note else ""))
        lines.append(f"  disk in all: +{size(self.disk_bytes)}" + (
            f" ({size(self.free_disk_bytes)} free)" if self.free_disk_bytes is not None else ""))
        if not self.enough_disk:
            lines.append(f"  warning: this needs about {size(self.disk_bytes)} and "
                         f"{size(self.free_disk_bytes)} is free: free some space first, or use "
                         "a larger disk (--home DIR)")
        lines += [f"  faster: {a}" for a in self.advice]
        return "\n".join(lines)


def make_plan(settings, models_dir: Path, corpus: str, release: Release, job: Path, *,
              left_to_download: int, passages: int | None = None, cache_file: Path | None = None,
              stages_done: frozenset[str] = frozenset()) -> GetPlan:
    """The plan for getting ``release`` into ``corpus``; ``passages`` when already counted.
    Stages in ``stages_done`` cost nothing."""
    from ...index.ann.compact import estimated_index_bytes
    from ...index.build.plan import GPU_PASSAGES_PER_S, GRAPH_INSERTS_PER_CORE_S, MODEL_BYTES_PER_DIM

    cores = max(1, os.cpu_count() or 1)
    articles = sum(f.size for f in release.files if not f.name.endswith("-index.txt.bz2"))
    n = passages if passages is not None else max(1, articles // BYTES_PER_PASSAGE[release.source])
    model = settings.retrieval.embedder
    dim = KNOWN_DIMS.get(model, 384)
    pps, device, how = embed_speed(settings, model, cache_file)
    index = estimated_index_bytes(n, dim)
    keyword_s, keyword_disk = _keyword_index(n)
    capacity = cpu_capacity()
    ingest, ingest_note = ingest_rate(release, cores, settings.corpus.ingest_workers, n, capacity)
    left = fts5_left(release, n, cores, settings.corpus.ingest_workers, capacity)
    stages = [
        Stage("download", left_to_download / DOWNLOAD_BYTES_PER_S, left_to_download, 64 * 2**20,
              left_to_download, f"at an assumed {size(DOWNLOAD_BYTES_PER_S)}/s"),
        Stage("ingest", n / ingest, (STORE_BYTES_PER_PASSAGE - FTS5_BYTES_PER_PASSAGE * left) * n,
              int(INGEST_RAM_BYTES), note=ingest_note),
        Stage("embed", n / pps, (4 * dim + 8) * n, int(MODEL_BYTES_PER_DIM * dim + 256e6),
              note=f"{model.rsplit('/', 1)[-1]} on {device}, {pps:,.0f} passages/s ({how})",
              device=device),
        Stage("index", n / (GRAPH_INSERTS_PER_CORE_S * cores) + keyword_s, index["disk"] + keyword_disk,
              index["ram_build"], note="search graph and keyword index" if keyword_s else ""),
    ]
    second = _second_model(settings, models_dir, n)
    if second:
        # ~5 times slower than MiniLM on CPU, as fast on a GPU (docs/corpus.md, BENCHMARKS.md)
        pps2 = GPU_PASSAGES_PER_S.get(second, 3000) if device == "cuda" else pps / SECOND_SLOWER_CPU
        dim2 = KNOWN_DIMS.get(second, 768)
        stages.insert(3, Stage("embed-second", n / pps2, (4 * dim2 + 8) * n + index["disk"],
                               int(MODEL_BYTES_PER_DIM * dim2 + 256e6),
                               note=f"second model {second.rsplit('/', 1)[-1]}: "
                                    "retrieval.second_embedder = \"\" leaves it out",
                               device=device))
    stages = [Stage(s.name, 0.0, 0, 0, 0, "done", s.device)
              if s.name in stages_done or (s.name == "embed-second" and "embed" in stages_done)
              else s for s in stages]
    advice = []
    embed = next(s for s in stages if s.name == "embed")
    if device == "cpu" and embed.seconds > 600:
        gpu = n / GPU_PASSAGES_PER_S.get(model, 3000)
        advice.append(f"on an NVIDIA GPU (CUDA build of torch) embedding takes about {duration(gpu)} "
                      f"instead of {duration(embed.seconds)} (H100 figure, BENCHMARKS.md)")
    return GetPlan(corpus, release.lang, release.source, release.snapshot, release.revision,
                   release.where, len(release.files), release.size, n, tuple(stages),
                   free_bytes(job), str(job), tuple(advice))


def _keyword_index(passages: int) -> tuple[float, int]:
    """Seconds and disk of the tantivy keyword index a corpus this large gets in its index
    stage (``index.bm25.tantivy_index``; none below ``TANTIVY_FROM_PASSAGES``)."""
    from ...index.bm25.tantivy_index import TANTIVY_FROM_PASSAGES
    from ...index.bm25.tantivy_schema import build_cost

    return build_cost(passages) if passages >= TANTIVY_FROM_PASSAGES else (0.0, 0)


def writer_rate(passages: int) -> float:
    """The one writer's passages/s over an ingest of ``passages`` (slower for a larger store)."""
    return WRITER_PASSAGES_PER_S * min(1.25, (WRITER_MEASURED_AT / max(passages, 1)) ** WRITER_SLOWDOWN_EXP)


def store_rate(passages: int) -> float:
    """The writer's passages/s storing an ingest of ``passages`` without its keyword index."""
    return STORE_PASSAGES_PER_S * min(1.25, (STORE_FTS_MEASURED_AT / max(passages, 1)) ** STORE_SLOWDOWN_EXP)


def fts_build_rate(passages: int) -> float:
    """Passages/s of building the keyword index of ``passages`` at the end of an ingest."""
    return FTS_BUILD_PASSAGES_PER_S * min(1.25, (STORE_FTS_MEASURED_AT / max(passages, 1)) ** WRITER_SLOWDOWN_EXP)


def serial_rate(source: str, passages: int) -> float:
    """Passages/s of one process parsing and storing: its parsing time per passage (the measured
    serial time less the writer's share at that size) plus the writer's at ``passages``."""
    parse = 1 / SERIAL_PASSAGES_PER_S[source] - 1 / writer_rate(SERIAL_MEASURED_AT[source])
    return 1 / (parse + 1 / writer_rate(passages))


def ingest_rate(release: Release, cores: int, workers_setting: int = 0,
                passages: int = WRITER_MEASURED_AT, capacity: float | None = None) -> tuple[float, str]:
    """(passages/s, how) of ingesting ``release`` (``passages`` of it) with ``cores`` cores: one
    process reads and stores; with workers, they parse on the cores the writer leaves while the
    one writer stores (the slower of the two bounds that phase), indexing each batch, or, where
    the workers parse fast enough for that to pay (as ``corpus.fts_build.worth_deferring``
    decides), storing alone and then building the keyword index (not at all from
    ``fts_build.TANTIVY_SERVES_FROM`` passages: tantivy's, counted in the index stage, serves
    keyword search there). A single-stream dump (no
    multistream index) parses in one process. ``capacity``: the cores' worth of parsing the
    machine does at once (``machine.cpu_capacity``: hardware threads beyond the physical cores add
    little), default ``cores``."""
    source = release.source
    workers = _workers(cores, workers_setting)
    splittable = _splittable(release)
    capacity = cores if capacity is None else min(cores, capacity)
    parse_cores = min(workers, max(1, capacity - 1)) if splittable else 1
    serial = serial_rate(source, passages)
    if workers <= 1 or cores <= 1:
        return serial, f"{serial:,.0f} passages/s in one process"
    parse = PARSE_PASSAGES_PER_CORE_S[source] * parse_cores
    if not defers(release, cores, workers_setting, capacity):
        writer = writer_rate(passages)  # the writer indexes per batch (``fts_build.worth_deferring``)
        rate = max(serial, min(writer, parse))
        bound = "the writer" if rate == writer else _parsing(parse_cores)
        return float(rate), f"{rate:,.0f} passages/s, {workers} worker processes, bound by {bound}"
    writer = store_rate(passages)
    store = min(writer, parse)
    bound = "the writer" if store == writer else _parsing(parse_cores)
    if passages >= fts_build.TANTIVY_SERVES_FROM:  # FTS5 left unbuilt: tantivy, in the index stage
        rate = max(serial, store)
        return float(rate), (f"{rate:,.0f} passages/s: {workers} worker processes, bound by {bound}; "
                             "the keyword index is tantivy's, built first in the index stage")
    fts = fts_build_rate(passages)
    rate = max(serial, 1 / (1 / store + 1 / fts))
    return float(rate), (f"{rate:,.0f} passages/s: {workers} worker processes, bound by {bound} "
                         f"({store:,.0f}/s), then the keyword index ({fts:,.0f}/s)")


def defers(release: Release, cores: int, workers_setting: int = 0, capacity: float | None = None) -> bool:
    """Whether the ingest builds its FTS5 index at the end rather than batch by batch (as
    ``corpus.fts_build.worth_deferring`` decides): workers that parse fast enough."""
    workers = _workers(cores, workers_setting)
    capacity = cores if capacity is None else min(cores, capacity)
    return (workers > 1 and cores > 1 and _splittable(release) and min(workers, capacity)
            * PARSE_PASSAGES_PER_CORE_S[release.source] >= DEFER_FROM_PASSAGES_PER_S)


def fts5_left(release: Release, passages: int, cores: int, workers_setting: int = 0,
              capacity: float | None = None) -> bool:
    """Whether the ingest leaves FTS5 unbuilt (deferred, and tantivy serves a corpus this large)."""
    return passages >= fts_build.TANTIVY_SERVES_FROM and defers(release, cores, workers_setting, capacity)


def _workers(cores: int, workers_setting: int) -> int:
    return workers_setting if workers_setting > 0 else min(cores, 16)


def _splittable(release: Release) -> bool:
    """A single-stream dump (no multistream index) parses in one process."""
    return release.source != "dump" or any(f.name.endswith("-index.txt.bz2") for f in release.files)


def _parsing(cores: float) -> str:
    if float(cores).is_integer():
        return f"{int(cores)} parsing core(s)"
    return f"~{cores:.1f} cores' worth of parsing (hardware threads beyond the cores add ~15 %)"


def _second_model(settings, models_dir: Path, passages: int) -> str:
    """The second embedding model the index build will run, or "" (``auto`` resolved)."""
    try:
        from ...index.embed.second import second_embedder_name

        return second_embedder_name(settings.retrieval, models_dir, passages=passages)
    except Exception:  # noqa: BLE001 - an estimate: a model that cannot be resolved is left out
        return ""


def embed_speed(settings, model: str, cache_file: Path | None) -> tuple[float, str, str]:
    """(passages/s, device, where the figure comes from) for ``model`` here, loading no model."""
    from ...index.build.plan import GPU_PASSAGES_PER_S, SpeedCache, machine_signature

    device = "cpu"
    if settings.retrieval.embed_device != "cpu":
        from ...index.embed.device import cuda_status

        device = "cuda" if cuda_status()[0] else "cpu"
    if cache_file is not None:
        try:
            signature = machine_signature(device)
        except Exception:  # noqa: BLE001 - no GPU name: no cached figure
            signature = None
        data = SpeedCache(cache_file)._read()  # noqa: SLF001 - read-only scan of the cache
        for key, entry in data.items():
            parts = key.split("|")
            if len(parts) == 5 and parts[0] == model and parts[1].startswith(device) \
                    and parts[4] == signature and isinstance(entry, dict) \
                    and entry.get("passages_per_s", 0) > 0:
                return float(entry["passages_per_s"]), device, "measured here"
    if device == "cuda":
        return float(GPU_PASSAGES_PER_S.get(model, 3000)), device, "H100 figure"
    cores = cpu_cores()[1]  # torch runs a thread per physical core
    return float(CPU_PASSAGES_PER_CORE_S * cores), device, "estimate, not measured here"


