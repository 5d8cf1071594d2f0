"""A small built-in list of instruct models that work well with SearChain, as GGUF files on the
Hugging Face Hub. Sizes are the Q4_K_M files' approximate sizes; ``sha256`` is filled where
pinned, otherwise the download is checked against the Hub's own SHA-256 (the LFS ETag).

Advice: a GPU with 6+ GB of VRAM runs the 7-8B models at interactive speed with full offload;
CPU-only machines are best served by the 1.5-3B models (about 8-20 tokens/s on 4-8 cores).
"""

from __future__ import annotations

from dataclasses import dataclass

GB = 1000 ** 3


@dataclass(frozen=True)
class CatalogueEntry:
    name: str  # what users type: `searchain models pull qwen2.5-3b`
    repo: str
    filename: str
    size_bytes: int  # approximate
    licence: str
    hardware: str  # who it suits
    sha256: str | None = None
    revision: str = "main"

    @property
    def size_label(self) -> str:
        return f"{self.size_bytes / GB:.1f} GB"


CATALOGUE: tuple[CatalogueEntry, ...] = (
    CatalogueEntry("qwen2.5-1.5b", "Qwen/Qwen2.5-1.5B-Instruct-GGUF",
                   "qwen2.5-1.5b-instruct-q4_k_m.gguf", int(1.12 * GB), "Apache-2.0",
                   "CPU-only laptops (4 GB RAM free); fastest, weakest reasoning"),
    CatalogueEntry("llama3.2-1b", "bartowski/Llama-3.2-1B-Instruct-GGUF",
                   "Llama-3.2-1B-Instruct-Q4_K_M.gguf", int(0.81 * GB),
                   "Llama 3.2 Community License", "CPU-only, low RAM (2 GB free)"),
    CatalogueEntry("qwen2.5-3b", "Qwen/Qwen2.5-3B-Instruct-GGUF",
                   "qwen2.5-3b-instruct-q4_k_m.gguf", int(2.10 * GB), "Qwen Research License",
                   "CPU-only desktops (6 GB RAM free), or any GPU with 4 GB VRAM"),
    CatalogueEntry("llama3.2-3b", "bartowski/Llama-3.2-3B-Instruct-GGUF",
                   "Llama-3.2-3B-Instruct-Q4_K_M.gguf", int(2.02 * GB),
                   "Llama 3.2 Community License",
                   "CPU-only desktops (6 GB RAM free), or any GPU with 4 GB VRAM"),
    CatalogueEntry("phi3.5-mini", "bartowski/Phi-3.5-mini-instruct-GGUF",
                   "Phi-3.5-mini-instruct-Q4_K_M.gguf", int(2.39 * GB), "MIT",
                   "CPU-only desktops (6 GB RAM free), or a GPU with 4 GB VRAM"),
    CatalogueEntry("qwen2.5-7b", "bartowski/Qwen2.5-7B-Instruct-GGUF",
                   "Qwen2.5-7B-Instruct-Q4_K_M.gguf", int(4.68 * GB), "Apache-2.0",
                   "GPU with 6+ GB VRAM (recommended default for GPUs); slow on CPU"),
    CatalogueEntry("mistral-7b", "bartowski/Mistral-7B-Instruct-v0.3-GGUF",
                   "Mistral-7B-Instruct-v0.3-Q4_K_M.gguf", int(4.37 * GB), "Apache-2.0",
                   "GPU with 6+ GB VRAM; slow on CPU"),
    CatalogueEntry("llama3.1-8b", "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF",
                   "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", int(4.92 * GB),
                   "Llama 3.1 Community License", "GPU with 8+ GB VRAM; slow on CPU"),
)
