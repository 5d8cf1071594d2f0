"""Which catalogue model suits this machine, and why: RAM, GPU memory and whether the installed
llama-cpp-python build can offload to a GPU.

The facts are probed without loading llama.cpp (``machine_facts``): importing it into the app's
GUI process can crash on some builds (issue #21), so the GPU build is read from the backend
libraries llama-cpp-python ships, and the GPU from ``nvidia-smi`` (or, on Apple Silicon, the
unified memory Metal may use). ``recommend`` is a pure function of those facts, so tests fake
any machine.

The rule. With a GPU build and a GPU whose memory is known, the largest model of the GPU ladder
whose full offload (weights + KV cache at the app's context + buffers) fits in 90% of the GPU's
memory (the rest is the desktop's and the driver's). Otherwise the CPU ladder: the largest model
needing at most a third of the RAM (the index, the embedder and the desktop need the rest) and
no more than is free now. Non-commercial models are never recommended (they stay listed).
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass

from .catalogue import CATALOGUE, DEFAULT_N_CTX, GIB, CatalogueEntry

GPU_LADDER = ("qwen2.5-1.5b", "qwen3-4b", "qwen3-8b", "qwen3-14b", "qwen3-30b-a3b")
# qwen3-30b-a3b computes with 3B parameters per token: on a CPU with the RAM for it, it answers
# about as fast as a dense 4B model and far better.
CPU_LADDER = ("qwen2.5-1.5b", "qwen3-4b", "qwen3-30b-a3b")
VRAM_USABLE = 0.9
RAM_SHARE = 1 / 3
_GPU_LIBS = re.compile(r"ggml-(cuda|metal|vulkan|hip|sycl|musa|opencl)", re.IGNORECASE)


@dataclass(frozen=True)
class MachineFacts:
    ram_total_bytes: int | None
    ram_available_bytes: int | None
    gpu_name: str | None = None
    vram_bytes: int | None = None  # the largest GPU's memory; None: no GPU found / unknown
    gpu_build: bool = False  # the installed llama-cpp-python can offload to a GPU

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Recommendation:
    entry: CatalogueEntry | None
    reason: str
    machine: MachineFacts
    n_ctx: int
    on_gpu: bool

    def fits(self, entry: CatalogueEntry) -> bool:
        """Does ``entry`` run on this machine the way the recommendation would run it?"""
        return _fits_gpu(entry, self.machine, self.n_ctx) if self.on_gpu \
            else _fits_cpu(entry, self.machine, self.n_ctx)


def recommend(machine: MachineFacts, entries=CATALOGUE, n_ctx: int = DEFAULT_N_CTX) -> Recommendation:
    by_name = {e.name: e for e in entries if not e.non_commercial}
    gpu_known = machine.gpu_build and machine.vram_bytes
    if gpu_known:
        fitting = [by_name[n] for n in GPU_LADDER if n in by_name
                   and _fits_gpu(by_name[n], machine, n_ctx)]
        if fitting:
            best = fitting[-1]
            return Recommendation(best, (
                f"{best.name}: the largest model whose full GPU offload fits your GPU "
                f"({machine.gpu_name or 'GPU'}, {_gib(machine.vram_bytes)}): it needs "
                f"{_gib(best.vram_bytes(n_ctx))} at a {n_ctx}-token context."), machine, n_ctx, True)
    fitting = [by_name[n] for n in CPU_LADDER if n in by_name and _fits_cpu(by_name[n], machine, n_ctx)]
    if not fitting:
        smallest = min(by_name.values(), key=lambda e: e.ram_bytes(n_ctx), default=None)
        return Recommendation(None, (
            f"No catalogue model fits this machine's RAM ({_ram(machine)}); the smallest, "
            f"{smallest.name if smallest else '-'}, needs "
            f"{_gib(smallest.ram_bytes(n_ctx)) if smallest else '-'}. Close other programs or "
            "use a server (llm.backend = openai)."), machine, n_ctx, False)
    best = fitting[-1]
    return Recommendation(best, (
        f"{best.name}: the largest model for running on the CPU that needs at most a third of "
        f"your RAM ({_ram(machine)}): {_gib(best.ram_bytes(n_ctx))} at a {n_ctx}-token context."
        + _why_not_gpu(machine)), machine, n_ctx, False)


def where_it_runs(ram_bytes: int, vram_bytes: int, machine: MachineFacts) -> str:
    """Where a model needing ``ram_bytes`` on the CPU or ``vram_bytes`` fully offloaded runs on
    this machine, by the rules the recommendation uses: ``"gpu"``, ``"cpu"``, or ``""`` (too
    big). Used for models found on disk (``discovery``), judged like catalogue entries."""
    if machine.gpu_build and _vram_fits(vram_bytes, machine):
        return "gpu"
    return "cpu" if _ram_fits(ram_bytes, machine) else ""


def _fits_gpu(entry: CatalogueEntry, machine: MachineFacts, n_ctx: int) -> bool:
    return _vram_fits(entry.vram_bytes(n_ctx), machine)


def _fits_cpu(entry: CatalogueEntry, machine: MachineFacts, n_ctx: int) -> bool:
    return _ram_fits(entry.ram_bytes(n_ctx), machine)


def _vram_fits(need: int, machine: MachineFacts) -> bool:
    return bool(machine.vram_bytes) and need <= machine.vram_bytes * VRAM_USABLE


def _ram_fits(need: int, machine: MachineFacts) -> bool:
    if machine.ram_total_bytes and need > machine.ram_total_bytes * RAM_SHARE:
        return False
    return not machine.ram_available_bytes or need <= machine.ram_available_bytes


def _why_not_gpu(machine: MachineFacts) -> str:
    if machine.gpu_name and not machine.gpu_build:
        return (f" Your GPU ({machine.gpu_name}) is not used: this llama-cpp-python build is "
                "CPU-only; install the CUDA build (docs/llm.md) for the GPU models.")
    if machine.gpu_build and not machine.vram_bytes:
        return " This build can offload, but the GPU's memory is unknown, so the CPU rule applies."
    if machine.gpu_build and machine.vram_bytes:
        return f" No GPU model fits your GPU's {_gib(machine.vram_bytes)}."
    return ""


def _gib(n: int | None) -> str:
    return f"{n / GIB:.1f} GiB" if n else "unknown"


def _ram(machine: MachineFacts) -> str:
    total = _gib(machine.ram_total_bytes)
    free = _gib(machine.ram_available_bytes)
    return f"{total} total, {free} free"


# -- probing this machine ---------------------------------------------------------------------

def machine_facts() -> MachineFacts:
    total, available = _meminfo()
    gpu_build = gpu_build_installed()
    name, vram = _nvidia_gpu()
    if vram is None and sys.platform == "darwin" and platform.machine() == "arm64" and total:
        # Apple Silicon: the GPU shares RAM; Metal lets a process wire about two thirds of it.
        name, vram = "Apple Silicon (unified memory)", int(total * 2 / 3)
    return MachineFacts(total, available, name, vram, gpu_build)


def _meminfo() -> tuple[int | None, int | None]:
    from ...machine import available_memory_bytes, total_memory_bytes

    return total_memory_bytes(), available_memory_bytes()


def _nvidia_gpu() -> tuple[str | None, int | None]:
    """(name, memory in bytes) of the NVIDIA GPU with the most memory, from nvidia-smi."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None, None
    try:
        out = subprocess.run([exe, "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=5, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    gpus = []
    for line in out.splitlines():
        name, _, mib = line.rpartition(",")
        try:
            gpus.append((int(float(mib.strip()) * 1024 ** 2), name.strip()))
        except ValueError:
            continue
    if not gpus:
        return None, None
    vram, name = max(gpus)
    return name, vram


def gpu_build_installed() -> bool:
    """Does the installed llama-cpp-python ship a GPU backend? Read from its library files, not
    by importing it (see the module docstring). Builds that link every backend into one library
    are not recognised (reported as CPU-only); Apple Silicon builds use Metal by default."""
    from ...machine import package_folders

    folders = package_folders("llama_cpp")
    if not folders:
        return False
    if sys.platform == "darwin" and platform.machine() == "arm64":
        return True
    for folder in folders:
        lib = folder / "lib"
        if lib.is_dir() and any(_GPU_LIBS.search(p.name) for p in lib.iterdir()):
            return True
    return False
