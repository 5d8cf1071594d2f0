"""The built-in list of instruct models that work well with SearChain, as GGUF files on the
Hugging Face Hub, each pinned so that what a user downloads is what was checked.

Every entry names the repository, the commit (``revision``) the file was checked at, the exact
byte size and the SHA-256 of the file (the Hub's LFS object id: the same value the Hub's file
page and ``X-Linked-Etag`` show), its licence with a plain ``non_commercial`` flag, the model's
trained context length, its chat-template family (``chat_templates.py``) and the architecture
numbers that size its KV cache, from which the RAM / VRAM it needs at the app's default context
is computed. Pins were taken from public evidence (the Hub's file pages as quoted by several
independent public download scripts that verify against them), November 2026; ``sha256=None``
marks a file whose hash could not be confirmed: ``ModelManager.pull`` then asks the user to
confirm before downloading it unverified.

Tiers for multi-hop QA on a workstation (``recommend.py`` picks among them for this machine):
low RAM: qwen2.5-1.5b; CPU with 16 GB: qwen3-4b (Qwen3-4B-Instruct-2507); 8 GB GPU: qwen3-8b
(hybrid thinking, turned off by the app); 12 GB GPU: qwen3-14b; 24 GB GPU: qwen3-30b-a3b (a
mixture of experts with 3B parameters active per token: fast for its size).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...config import LLMSettings
from ...units import size

GIB = 1024 ** 3
DEFAULT_N_CTX = LLMSettings.n_ctx  # the context the app loads a model with unless told otherwise
# Compute buffers, tokenizer tables and the Python side on the CPU (as memory.OVERHEAD_BYTES).
RAM_OVERHEAD_BYTES = 256 * 1024 ** 2
# llama.cpp's GPU compute buffers at a 4k context (the logits of a 150k-token vocabulary
# included) run to a few hundred MiB for these models: a fixed, generous allowance.
VRAM_OVERHEAD_BYTES = 640 * 1024 ** 2


@dataclass(frozen=True)
class CatalogueEntry:
    name: str  # what users type: `searchain models pull qwen3-4b`
    repo: str
    filename: str
    size_bytes: int  # exact, as the Hub reports it at ``revision``
    licence: str
    hardware: str  # who it suits, in words
    sha256: str | None = None  # None: unknown; the download then needs the user's confirmation
    revision: str = "main"  # the commit the pin was checked at
    non_commercial: bool = False  # the licence forbids commercial use
    context_length: int = 32768  # the model's trained context (tokens)
    template: str = "chatml"  # chat-template family: a key of chat_templates.TEMPLATES
    thinking: bool = False  # a hybrid "thinking" model: the app turns thinking off
    n_layers: int = 0
    n_kv_heads: int = 0
    head_dim: int = 0
    parameters: str = ""  # "4B", "30B (3B active)"

    @property
    def size_label(self) -> str:
        return size(self.size_bytes)

    @property
    def url(self) -> str:
        return f"https://huggingface.co/{self.repo}/resolve/{self.revision}/{self.filename}"

    def kv_cache_bytes(self, n_ctx: int = DEFAULT_N_CTX) -> int:
        """F16 keys + values for ``n_ctx`` tokens in every layer."""
        return 2 * 2 * n_ctx * self.n_layers * self.n_kv_heads * self.head_dim

    def ram_bytes(self, n_ctx: int = DEFAULT_N_CTX) -> int:
        """RAM to run it on the CPU alone: weights + KV cache + overhead."""
        return self.size_bytes + self.kv_cache_bytes(n_ctx) + RAM_OVERHEAD_BYTES

    def vram_bytes(self, n_ctx: int = DEFAULT_N_CTX) -> int:
        """GPU memory to run it with every layer offloaded: weights + KV cache + buffers."""
        return self.size_bytes + self.kv_cache_bytes(n_ctx) + VRAM_OVERHEAD_BYTES

    def facts(self, n_ctx: int = DEFAULT_N_CTX) -> dict:
        """Everything a user (or `searchain models catalogue --json`) needs to choose."""
        return {
            "name": self.name, "repo": self.repo, "revision": self.revision,
            "filename": self.filename, "url": self.url, "size_bytes": self.size_bytes,
            "sha256": self.sha256, "verified": bool(self.sha256), "licence": self.licence,
            "non_commercial": self.non_commercial, "parameters": self.parameters,
            "context_length": self.context_length, "chat_template": self.template,
            "thinking": self.thinking, "hardware": self.hardware, "n_ctx": n_ctx,
            "ram_bytes": self.ram_bytes(n_ctx), "vram_bytes": self.vram_bytes(n_ctx),
        }


APACHE = "Apache-2.0"
LLAMA32 = "Llama 3.2 Community License (use policy; >700M monthly users need Meta's licence)"

CATALOGUE: tuple[CatalogueEntry, ...] = (
    CatalogueEntry(
        "qwen2.5-1.5b", "Qwen/Qwen2.5-1.5B-Instruct-GGUF", "qwen2.5-1.5b-instruct-q4_k_m.gguf",
        1_117_320_736, APACHE, "Low RAM: CPU-only laptops with 3 GB free; fastest, weakest reasoning",
        sha256="6a1a2eb6d15622bf3c96857206351ba97e1af16c30d7a74ee38970e434e9407e",
        revision="91cad51170dc346986eccefdc2dd33a9da36ead9", context_length=32768,
        template="qwen2.5", n_layers=28, n_kv_heads=2, head_dim=128, parameters="1.5B"),
    CatalogueEntry(
        "llama3.2-1b", "bartowski/Llama-3.2-1B-Instruct-GGUF", "Llama-3.2-1B-Instruct-Q4_K_M.gguf",
        807_694_464, LLAMA32, "CPU-only, very low RAM (2 GB free)",
        sha256="6f85a640a97cf2bf5b8e764087b1e83da0fdb51d7c9fab7d0fece9385611df83",
        revision="067b946cf014b7c697f3654f621d577a3e3afd1c", context_length=131072,
        template="llama3", n_layers=16, n_kv_heads=8, head_dim=64, parameters="1.2B"),
    CatalogueEntry(
        "qwen2.5-3b", "Qwen/Qwen2.5-3B-Instruct-GGUF", "qwen2.5-3b-instruct-q4_k_m.gguf",
        # 2,104,932,768 bytes per the Hub's LFS metadata; the ~1.93 GB quoted elsewhere is
        # bartowski's re-quantisation (Qwen2.5-3B-Instruct-Q4_K_M.gguf, 1,929,903,264 bytes).
        2_104_932_768, "Qwen Research License (non-commercial)",
        "CPU-only desktops (4 GB free) or any GPU with 4 GB; research use only",
        sha256="626b4a6678b86442240e33df819e00132d3ba7dddfe1cdc4fbb18e0a9615c62d",
        revision="7dabda4d13d513e3e842b20f0d435c732f172cbe", non_commercial=True,
        context_length=32768, template="qwen2.5", n_layers=36, n_kv_heads=2, head_dim=128,
        parameters="3.1B"),
    CatalogueEntry(
        "llama3.2-3b", "bartowski/Llama-3.2-3B-Instruct-GGUF", "Llama-3.2-3B-Instruct-Q4_K_M.gguf",
        2_019_377_696, LLAMA32, "CPU-only desktops (4 GB free) or any GPU with 4 GB",
        sha256="6c1a2b41161032677be168d354123594c0e6e67d2b9227c84f296ad037c728ff",
        revision="5ab33fa94d1d04e903623ae72c95d1696f09f9e8", context_length=131072,
        template="llama3", n_layers=28, n_kv_heads=8, head_dim=128, parameters="3.2B"),
    CatalogueEntry(
        "phi3.5-mini", "bartowski/Phi-3.5-mini-instruct-GGUF", "Phi-3.5-mini-instruct-Q4_K_M.gguf",
        2_393_232_672, "MIT", "CPU-only desktops (6 GB free) or a GPU with 4 GB",
        sha256="e4165e3a71af97f1b4820da61079826d8752a2088e313af0c7d346796c38eff5",
        revision="6d70da17e749a471ccb62ade694486011a75cda3", context_length=131072,
        template="phi3", n_layers=32, n_kv_heads=32, head_dim=96, parameters="3.8B"),
    CatalogueEntry(
        "qwen3-4b", "bartowski/Qwen_Qwen3-4B-Instruct-2507-GGUF",
        "Qwen_Qwen3-4B-Instruct-2507-Q4_K_M.gguf", 2_497_280_736, APACHE,
        "CPU with 16 GB RAM (or a GPU with 4 GB): the best CPU model (Qwen3-4B-Instruct-2507)",
        sha256="2fde00ce69dd4899c70d020845e2638353015bba0fdf161b3eb965f2bca4464e",
        revision="ae44f08e1392f39c0e474af10c3ff8355c8b6688", context_length=262144,
        template="qwen3-instruct", n_layers=36, n_kv_heads=8, head_dim=128, parameters="4B"),
    CatalogueEntry(
        "qwen2.5-7b", "bartowski/Qwen2.5-7B-Instruct-GGUF", "Qwen2.5-7B-Instruct-Q4_K_M.gguf",
        # bartowski re-uploaded this file (three different SHA-256s over time): the revision pin
        # is what keeps the hash true.
        4_683_074_240, APACHE, "GPU with 6+ GB VRAM; slow on CPU",
        sha256="65b8fcd92af6b4fefa935c625d1ac27ea29dcb6ee14589c55a8f115ceaaa1423",
        revision="8911e8a47f92bac19d6f5c64a2e2095bd2f7d031", context_length=32768,
        template="qwen2.5", n_layers=28, n_kv_heads=4, head_dim=128, parameters="7.6B"),
    CatalogueEntry(
        "mistral-7b", "bartowski/Mistral-7B-Instruct-v0.3-GGUF",
        "Mistral-7B-Instruct-v0.3-Q4_K_M.gguf", 4_372_812_000, APACHE,
        "GPU with 6+ GB VRAM; slow on CPU (its template has no system role: the app folds it in)",
        sha256="1270d22c0fbb3d092fb725d4d96c457b7b687a5f5a715abe1e818da303e562b6",
        revision="61fd4167fff3ab01ee1cfe0da183fa27a944db48", context_length=32768,
        template="mistral", n_layers=32, n_kv_heads=8, head_dim=128, parameters="7.2B"),
    CatalogueEntry(
        "llama3.1-8b", "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF",
        "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", 4_920_739_232,
        "Llama 3.1 Community License (use policy; >700M monthly users need Meta's licence)",
        "GPU with 8+ GB VRAM; slow on CPU",
        sha256="7b064f5842bf9532c91456deda288a1b672397a54fa729aa665952863033557c",
        revision="bf5b95e96dac0462e2a09145ec66cae9a3f12067", context_length=131072,
        template="llama3", n_layers=32, n_kv_heads=8, head_dim=128, parameters="8.0B"),
    CatalogueEntry(
        "qwen3-8b", "Qwen/Qwen3-8B-GGUF", "Qwen3-8B-Q4_K_M.gguf", 5_027_783_488, APACHE,
        "GPU with 8 GB VRAM (hybrid thinking model; the app turns thinking off)",
        sha256="d98cdcbd03e17ce47681435b5150e34c1417f50b5c0019dd560e4882c5745785",
        revision="7c41481f57cb95916b40956ab2f0b139b296d974", context_length=32768,
        template="qwen3", thinking=True, n_layers=36, n_kv_heads=8, head_dim=128,
        parameters="8.2B"),
    CatalogueEntry(
        "qwen3-14b", "Qwen/Qwen3-14B-GGUF", "Qwen3-14B-Q4_K_M.gguf", 9_001_752_960, APACHE,
        "GPU with 12 GB VRAM (hybrid thinking model; the app turns thinking off)",
        sha256="500a8806e85ee9c83f3ae08420295592451379b4f8cf2d0f41c15dffeb6b81f0",
        revision="530227a7d994db8eca5ab5ced2fb692b614357fd", context_length=32768,
        template="qwen3", thinking=True, n_layers=40, n_kv_heads=8, head_dim=128,
        parameters="14.8B"),
    CatalogueEntry(
        "qwen3-30b-a3b", "bartowski/Qwen_Qwen3-30B-A3B-Instruct-2507-GGUF",
        "Qwen_Qwen3-30B-A3B-Instruct-2507-Q4_K_M.gguf", 18_632_183_808, APACHE,
        "GPU with 24 GB VRAM, or a CPU with 64 GB RAM: mixture of experts, 3B active, fast",
        sha256="382b4f5a164d200f93790ee0e339fae12852896d23485cfb203ce868fea33a95",
        revision="6c6e8692f43e4ca663f7ece8229a1361090d3a4c", context_length=262144,
        template="qwen3-instruct", n_layers=48, n_kv_heads=4, head_dim=128,
        parameters="30.5B (3.3B active)"),
)


def catalogue_entry(name: str, entries: tuple[CatalogueEntry, ...] = CATALOGUE) -> CatalogueEntry | None:
    """The entry of ``entries`` called ``name`` (case-insensitive), or None."""
    return next((e for e in entries if e.name == name.strip().lower()), None)
