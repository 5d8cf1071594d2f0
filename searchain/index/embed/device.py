"""Where an embedding model runs: ``retrieval.embed_device = auto | cpu | cuda``.

``auto`` takes the CUDA GPU when torch sees one and the CPU otherwise, so a workstation with an
NVIDIA card and a CUDA build of torch embeds there without being told (the default install pins
the CPU build of torch, which never sees a GPU). ``cuda`` insists: without a usable GPU it is an
error that says why, rather than a silent build fifty times slower than the user asked for.

Batch sizes differ by device because the costs differ: on a few CPU cores small batches pad
less and win (8, ``retrieval.batch_size``); a GPU needs large batches to fill its cores
(``retrieval.gpu_batch_size``, 0 = ``GPU_BATCH_SIZE``, measured on an H100, BENCHMARKS.md).
"""

from __future__ import annotations

from ...errors import ModelError

DEVICES = ("auto", "cpu", "cuda")
GPU_BATCH_SIZE = 512


def cuda_build() -> bool:
    """Whether the installed torch is a CUDA build, read from its ``version.py`` without importing
    torch (a second's work, and the default install's CPU build can never use a GPU)."""
    import re

    from ...machine import package_folders

    folders = package_folders("torch")
    if not folders:
        return False
    for folder in folders:
        try:
            text = (folder / "version.py").read_text(encoding="utf-8")
        except OSError:
            continue
        match = re.search(r"^cuda\s*(?::[^=]*)?=\s*(.+)$", text, re.MULTILINE)
        return bool(match) and match.group(1).strip() not in ("None", "''", '""')
    return True  # cannot tell: ask torch itself


def cuda_status() -> tuple[bool, str]:
    """``(usable, why)``: whether torch can embed on a CUDA GPU here, and a sentence saying so.

    Imports torch (the caller is about to load a model anyway, or is the doctor).
    """
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - torch is a dependency
        return False, f"torch cannot be imported ({exc})"
    version = torch.__version__
    if torch.version.cuda is None:
        return False, f"torch {version} is a CPU-only build"
    try:
        if not torch.cuda.is_available():
            return False, f"torch {version} (CUDA {torch.version.cuda}) sees no CUDA GPU"
        name = torch.cuda.get_device_name(0)
    except Exception as exc:  # a broken driver raises from inside torch
        return False, f"torch {version} cannot use the GPU: {exc}"
    return True, f"{name} (torch {version}, CUDA {torch.version.cuda})"


CUDA_HINT = ("Install a CUDA build of torch into the app's environment (README, 'GPU embedding'), "
             "or set retrieval.embed_device to auto or cpu.")


def resolve_device(setting: str) -> str:
    """``cpu`` or ``cuda`` for the setting; ``cuda`` without a usable GPU raises ``ModelError``."""
    setting = (setting or "auto").strip().lower()
    if setting.startswith("cuda"):
        usable, why = cuda_status()
        if not usable:
            raise ModelError(f"retrieval.embed_device is {setting}, but {why}.", hint=CUDA_HINT)
        return setting
    if setting == "cpu":
        return "cpu"
    if setting != "auto":
        raise ValueError(f"embed_device must be one of {', '.join(DEVICES)}; got {setting!r}")
    return "cuda" if cuda_status()[0] else "cpu"


def batch_size_for(device: str, cpu_batch_size: int, gpu_batch_size: int = 0) -> int:
    """Passages per forward pass on ``device`` (see the module docstring)."""
    if device.startswith("cuda"):
        return gpu_batch_size if gpu_batch_size > 0 else GPU_BATCH_SIZE
    return cpu_batch_size
