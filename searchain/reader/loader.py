"""Pick the reader the settings ask for: DPR when installed, else the chat model."""

from __future__ import annotations

from ..config import AppPaths, Settings
from ..errors import ConfigError, ModelError
from .base import Reader
from .dpr import DEFAULT_DPR_READER, is_dpr_reader_dir, reader_dir

READER_CHOICES = ("auto", "dpr", "llm")


def dpr_reader_name(settings: Settings) -> str:
    """The DPR checkpoint to use: ``settings.reasoning.reader_model`` if that field exists
    (a Hub name under ``<models_dir>/readers/`` or a folder path), else the paper's reader."""
    return getattr(settings.reasoning, "reader_model", "") or DEFAULT_DPR_READER


def dpr_reader_available(paths: AppPaths, settings: Settings) -> bool:
    from pathlib import Path

    name = dpr_reader_name(settings)
    return is_dpr_reader_dir(Path(name).expanduser()) or is_dpr_reader_dir(reader_dir(paths, name))


def load_reader(paths: AppPaths, settings: Settings, llm=None) -> Reader:
    """The reader named by ``settings.reasoning.reader``:

    - ``"dpr"``: the DPR reader (ModelError if it is not installed);
    - ``"llm"``: the LLM reader over ``llm`` (ModelError if ``llm`` is None);
    - ``"auto"``: DPR if installed, else the LLM reader, else ModelError saying how to get either.
    """
    choice = settings.reasoning.reader
    if choice not in READER_CHOICES:
        raise ConfigError(f"Unknown reader {choice!r} in settings.reasoning.reader.",
                          hint=f"Use one of: {', '.join(READER_CHOICES)}.")
    if choice == "dpr" or (choice == "auto" and dpr_reader_available(paths, settings)):
        from .dpr import DPRSpanReader

        return DPRSpanReader(dpr_reader_name(settings), threshold=settings.reasoning.theta,
                             models_dir=paths.models_dir)
    if llm is None:
        raise ModelError(
            "No reader is available: no DPR reader is installed and no language model is loaded."
            if choice == "auto" else "The LLM reader needs a loaded language model.",
            hint="Download the DPR reader with `searchain reader pull`, or configure a GGUF "
            "model (`--model PATH`).",
        )
    from .llm_reader import LLMReader

    return LLMReader(llm, threshold=settings.reasoning.llm_reader_theta)
