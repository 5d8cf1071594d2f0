"""``searchain bench discovery``: how long finding the models on a computer takes (#35).

Lays out, in a temporary folder, a fake home holding ``--models`` GGUFs of 1-20 GB spread over
every place discovery looks (LM Studio, Ollama manifests + blobs, GPT4All, Jan, Hugging Face
snapshots linked to blobs, llama.cpp's cache, a user folder). Each file is a real GGUF header
extended as a sparse file (``llm/fakes/sparse_gguf.py``): ``stat`` sees the gigabytes, the disk
holds kilobytes. Then times ``discover_models`` (walk, manifests, header reads, fit) over that
home, ``--repeats`` times with every header read afresh, and prints ONE JSON object: how many
were found, the median and every run's seconds (and, beside them, a second look in the same
process, when discovery remembers the headers). Goal: 1 s for 50 models. Beside them, the
header reads alone, as the reader does them (leaping over the vocabulary) and stepping through
every string (the reader before the leap), over the same files in the same run.

``--vocab N`` gives every header an N-token vocabulary and as many merges (a real model's header:
Qwen's has about 150,000 of each, several megabytes), which is what a header read mostly costs.
The files were just written, so they are in the page cache: this measures the work discovery
does, not a cold disk's seeks.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import time
from pathlib import Path

GB = 10 ** 9
GOAL_S = 1.0
LAYOUTS = ("lmstudio", "ollama", "gpt4all", "jan", "hf-cache", "llama.cpp", "folder")


def register(sub) -> None:
    p = sub.add_parser("discovery", help="time model discovery over a fake home of sparse GGUFs")
    p.add_argument("--models", type=int, default=50, help="GGUFs laid out (default 50)")
    p.add_argument("--repeats", type=int, default=7, help="timed discoveries (default 7)")
    p.add_argument("--vocab", type=int, default=0,
                   help="tokens (and merges) in each header; 0 = none, 150000 = like Qwen's")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--work", help="folder for the fake home (default: a temporary one)")
    p.add_argument("--json", action="store_true", help="(always JSON; accepted for symmetry)")
    p.set_defaults(func=handle)


def handle(ctx, args) -> int:
    from .workdir import in_work_folder

    print(json.dumps(in_work_folder(args.work, "searchain-bench-discovery-", lambda work: measure(work, args)), indent=2))
    return 0


def measure(work: Path, args) -> dict:
    from ..llm.models.discovery import discover_models
    from ..llm.models.facts_cache import FactsCache
    from ..llm.models.recommend import machine_facts

    home = work / "home"
    started = time.perf_counter()
    sizes = lay_out_home(home, args.models, vocab=args.vocab, seed=args.seed)
    layout_s = time.perf_counter() - started
    started = time.perf_counter()
    machine = machine_facts()  # probed once, as the dialog and the CLI do
    probe_s = time.perf_counter() - started
    env = {"HOME": str(home)}  # nothing of the real machine's home or variables
    folders = [str(home / "my-models")]
    runs, cached, from_disk, found = [], [], [], []
    cache_file = work / "cache" / "gguf-facts.json"
    for _ in range(max(1, args.repeats)):
        remembered = FactsCache()  # every header read again: a first look, not a refresh
        started = time.perf_counter()
        found = discover_models(None, folders, env=env, machine=machine, facts=remembered)
        runs.append(time.perf_counter() - started)
        started = time.perf_counter()
        discover_models(None, folders, env=env, machine=machine, facts=remembered)  # same process
        cached.append(time.perf_counter() - started)
        if not cache_file.exists():
            discover_models(None, folders, env=env, machine=machine, facts=FactsCache(cache_file))
        started = time.perf_counter()  # a later run of the CLI or the app: the facts file, loaded anew
        discover_models(None, folders, env=env, machine=machine, facts=FactsCache(cache_file))
        from_disk.append(time.perf_counter() - started)
    headers = [m.path for m in found if m.usable]
    leapt, stepped = _header_reads(headers, leap=True), _header_reads(headers, leap=False)
    disk = sum(os.stat(p).st_blocks * 512 for p in home.rglob("*") if p.is_file() and not p.is_symlink())
    median = statistics.median(runs)
    return {
        "benchmark": "discovery",
        "models_laid_out": len(sizes),
        "found": len(found),
        "readable": sum(1 for m in found if m.usable),
        "sources": {s: sum(1 for m in found if m.source == s) for s in LAYOUTS},
        "logical_gb": round(sum(sizes) / GB, 1),
        "on_disk_mb": round(disk / 1e6, 2),
        "vocab_per_header": args.vocab,
        "seconds_median": round(median, 4),
        "seconds_runs": [round(r, 4) for r in runs],
        "ms_per_model": round(median * 1000 / max(1, len(found)), 2),
        "seconds_median_headers_remembered": round(statistics.median(cached), 4),
        "seconds_median_from_facts_file": round(statistics.median(from_disk), 4),
        "header_reads_seconds_median": round(leapt, 4),
        "header_reads_seconds_median_stepping_every_string": round(stepped, 4),
        "goal_seconds": GOAL_S,
        "meets_goal": median <= GOAL_S,
        "machine_probe_seconds": round(probe_s, 3),
        "layout_seconds": round(layout_s, 2),
        "cpu_count": os.cpu_count(),
    }


def _header_reads(paths: list, *, leap: bool, repeats: int = 3) -> float:
    """Median seconds to read every header in ``paths``: with the reader's leap over long string
    arrays, or (the baseline) stepping through every vocabulary string and merge."""
    from ..llm.models.gguf_header import read_header

    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        for path in paths:
            read_header(path, leap=leap)
        runs.append(time.perf_counter() - started)
    return statistics.median(runs)


def lay_out_home(home: Path, n: int, *, vocab: int = 0, seed: int = 0) -> list[int]:
    """``n`` sparse GGUFs of 1-20 GB, dealt in turn to each place discovery looks; their sizes."""
    from ..llm.fakes.sparse_gguf import write_sparse_gguf

    rng = random.Random(seed)
    sizes = []
    for i in range(n):
        size = rng.randint(1 * GB, 20 * GB)
        where = LAYOUTS[i % len(LAYOUTS)]
        name = f"model-{i:03d}-Q4_K_M"
        kw = {"vocab_size": vocab, "name": name}
        if where == "ollama":
            digest = f"{i:064x}"
            write_sparse_gguf(home / ".ollama/models/blobs" / f"sha256-{digest}", size, **kw)
            manifest = home / ".ollama/models/manifests/registry.ollama.ai/library" / f"model-{i:03d}" / "latest"
            manifest.parent.mkdir(parents=True, exist_ok=True)
            manifest.write_text(json.dumps({"schemaVersion": 2, "layers": [
                {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}", "size": size}]}))
        elif where == "hf-cache":
            repo = home / ".cache/huggingface/hub" / f"models--bench--model-{i:03d}-GGUF"
            write_sparse_gguf(repo / "blobs" / f"{i:064x}", size, **kw)
            link = repo / "snapshots" / f"{i:040x}" / f"{name}.gguf"
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(Path("../../blobs") / f"{i:064x}")
        else:
            folder = {"lmstudio": ".lmstudio/models/bench/model-GGUF", "gpt4all": ".local/share/nomic.ai/GPT4All",
                      "jan": f".local/share/Jan/data/llamacpp/models/{name}", "llama.cpp": ".cache/llama.cpp",
                      "folder": "my-models/nested"}[where]
            write_sparse_gguf(home / folder / f"{name}.gguf", size, **kw)
        sizes.append(size)
    return sizes
