"""What each setting may hold, settings read from JSON by those rules (``from_dict``), and
dotted-key access to settings (``searchain config``).

``Settings.load`` checks every value against these rules, so a mistyped choice or an impossible
number is reported with its key when the file is read, rather than as an odd failure in the
middle of an answer. Keys are dotted paths: ``retrieval.retriever``, ``llm.n_ctx``,
``active_corpus``. The ``ui`` section belongs to the desktop app and is not checked here.

The choice lists are literals, not imports, so that reading settings does not import numpy
through the retrievers; a test keeps them equal to the lists the engine's modules accept.
"""

from __future__ import annotations

import difflib
import json
import math
import os
from dataclasses import fields, is_dataclass
from typing import Any

from .errors import ConfigError

CHOICES: dict[str, tuple[str, ...]] = {
    "retrieval.retriever": ("dense", "bm25", "hybrid"),
    "retrieval.hybrid_method": ("zscore", "minmax", "rrf"),
    "retrieval.embed_precision": ("auto", "fp32", "bf16", "fp16"),
    "retrieval.embed_device": ("auto", "cpu", "cuda"),
    "llm.backend": ("llama_cpp", "openai"),
    "llm.isolation": ("process", "inprocess"),
    "llm.server_grammar": ("auto", "on", "off"),
    "llm.server_family": ("auto", "llama.cpp", "ollama", "lmstudio", "vllm", "other"),
    "reasoning.mode": ("searchain", "coq", "direct", "rag", "genground", "geek"),
    "reasoning.reader": ("auto", "dpr", "llm"),
    "reasoning.task": ("auto", "multihop", "yesno", "longform"),
    "reasoning.final_answer": ("passages", "tracing"),
    "reasoning.chain_steps": ("stepwise", "whole", "whole_no_final"),  # reasoning.loop.stepwise.CHAIN_STEPS
    "reasoning.feedback_style": ("turn", "inline"),  # reasoning.loop.stepwise.FEEDBACK_STYLES
    "reasoning.final_steps": ("off", "found", "disagree", "always"),
}
# Old spellings still read (settings files write every field, so old values stay around).
LEGACY_CHOICES: dict[str, tuple[str, ...]] = {"retrieval.hybrid_method": ("score",)}

# Inclusive bounds; None = unbounded on that side.
RANGES: dict[str, tuple[float | None, float | None]] = {
    "retrieval.hnsw_m": (2, 512),
    "retrieval.hnsw_ef_construction": (1, None),
    "retrieval.hnsw_ef_search": (1, None),
    "retrieval.batch_size": (1, None),
    "retrieval.gpu_batch_size": (0, None),
    "retrieval.bm25_title_weight": (0, None),
    "retrieval.bm25_idf_power": (0, None),
    "retrieval.hybrid_dense_weight": (0, 1),
    "retrieval.hybrid_depth": (1, None),
    "retrieval.hybrid_title_boost": (0, None),
    "retrieval.rerank_depth": (1, None),
    "llm.n_gpu_layers": (-1, None),
    "llm.n_ctx": (16, None),
    "llm.n_threads": (0, None),
    # llama-cpp-python keeps a logits array of n_batch x vocabulary floats: 2**31 asked for 2 TiB
    "llm.n_batch": (1, 65536),
    "llm.temperature": (0, None),
    "llm.max_tokens": (1, None),
    "llm.prompt_lookup": (0, 64),
    "llm.draft_tokens": (1, 64),
    "llm.server_timeout": (1, 86400),
    "reasoning.llm_reader_theta": (0, 1),
    "reasoning.alpha": (0, 1),
    "reasoning.r_max": (1, None),
    "reasoning.top_k": (1, None),
    "reasoning.question_passages": (0, 10),
    "reasoning.feedback_chars": (100, 1200),
    "reasoning.reference_chars": (60, 1200),
    "reasoning.geek_reasoning_chars": (8, 4000),
    "reasoning.geek_branches": (1, 9),
    "reasoning.duplicate_threshold": (0, 1),
    "reasoning.followup_turns": (0, None),
    "corpus.max_file_mb": (0, None),
    "corpus.ingest_workers": (0, 256),
}

# Lists of folders: each entry must be an absolute path ("~" counts), since a relative one
# would mean a different folder for the app and for each shell the CLI runs in.
FOLDER_LISTS = ("llm.model_folders",)

SKIPPED_SECTIONS = ("ui",)
# Secrets: kept in the settings file, never printed (`config show/get/set` print a mask).
SECRET_KEYS = ("llm.server_key",)
SECRET_MASK = "(set, hidden)"


def masked(key: str, value: Any) -> Any:
    """``value`` as it may be printed: a set secret becomes ``SECRET_MASK``."""
    return SECRET_MASK if key in SECRET_KEYS and value else value


def problem(key: str, value: Any) -> str | None:
    """Why ``value`` (already of the right type) cannot be the setting ``key``; None if it can."""
    if key in FOLDER_LISTS:
        relative = [v for v in value if not os.path.isabs(os.path.expanduser(v))]
        if relative:
            return (f"settings.{key} must hold absolute paths (e.g. /home/me/models or "
                    f"~/models); got {relative[0]!r}.")
        return None
    if key in CHOICES and value not in CHOICES[key] + LEGACY_CHOICES.get(key, ()):
        return f"settings.{key} must be one of {', '.join(CHOICES[key])}; got {value!r}."
    low, high = RANGES.get(key, (None, None))
    if low is not None and value < low:
        return f"settings.{key} must be at least {low:g}; got {value!r}."
    if high is not None and value > high:
        return f"settings.{key} must be at most {high:g}; got {value!r}."
    return None


def flatten(settings) -> dict[str, Any]:
    """Every setting as ``{dotted key: value}``, in declaration order (the ``ui`` section left out)."""
    out: dict[str, Any] = {}

    def walk(obj, prefix: str) -> None:
        for f in fields(obj):
            if not prefix and f.name in SKIPPED_SECTIONS:
                continue
            value = getattr(obj, f.name)
            if is_dataclass(value):
                walk(value, f"{prefix}{f.name}.")
            else:
                out[prefix + f.name] = value

    walk(settings, "")
    return out


def unknown_keys(data: dict[str, Any], settings_cls) -> list[str]:
    """Dotted keys in a settings document that no setting has (typos, or a newer version's)."""
    known = set(flatten(settings_cls()))
    sections = {key.split(".")[0] for key in known if "." in key}
    found: list[str] = []
    for name, value in data.items():
        if name in SKIPPED_SECTIONS or name == "settings_version":  # settings_file.VERSION_KEY
            continue
        if name in sections and isinstance(value, dict):
            found += [f"{name}.{sub}" for sub in value if f"{name}.{sub}" not in known]
        elif name not in known and name not in sections:
            found.append(name)
    return found


def closest_keys(key: str, settings_cls) -> list[str]:
    """Up to three real keys that ``key`` was probably meant to be."""
    return difflib.get_close_matches(key, list(flatten(settings_cls())), n=3, cutoff=0.6)


def unknown_key_notes(data: dict[str, Any], settings_cls) -> list[str]:
    """One line per unknown key of a settings document, with the likely intended key."""
    notes = []
    for key in unknown_keys(data, settings_cls):
        close = closest_keys(key, settings_cls)
        notes.append(f"Unknown setting {key!r} (ignored" + (f"; did you mean {close[0]}?)." if close else ")."))
    return notes


def check_key(settings, key: str) -> None:
    """A ConfigError naming the closest keys when ``key`` is not a setting."""
    if key not in flatten(settings):
        close = closest_keys(key, type(settings))
        hint = (f"Did you mean {' or '.join(close)}?" if close
                else "`searchain config show` lists every setting.")
        raise ConfigError(f"There is no setting {key!r}.", hint=hint)


def get_value(settings, key: str) -> Any:
    check_key(settings, key)
    return flatten(settings)[key]


def parse_value(text: str, current: Any) -> Any:
    """The command line's text as the type of the setting it replaces (JSON for numbers and
    true/false; strings as typed, quotes optional; a list as JSON, or one bare item)."""
    if isinstance(current, str):
        if len(text) >= 2 and text[0] == text[-1] == '"':
            return json.loads(text)
        return text
    if isinstance(current, list):  # a JSON list, or one bare item: `... model_folders ~/models`
        if text.lstrip().startswith("["):
            try:
                return json.loads(text)
            except ValueError:
                return text  # reported below as the wrong type
        return [text]
    try:
        return json.loads(text.lower() if isinstance(current, bool) else text)
    except ValueError:
        return text  # reported below as the wrong type


def with_value(settings, key: str, value: Any):
    """A copy of ``settings`` with ``key`` set to ``value``; ConfigError if it is not allowed."""
    check_key(settings, key)
    data = settings.to_dict()
    section = data
    *parents, name = key.split(".")
    for parent in parents:
        section = section[parent]
    section[name] = value
    return type(settings).from_dict(data)  # type and range checks, with the key in the message


def with_default(settings, key: str):
    """A copy of ``settings`` with ``key`` back at its default."""
    return with_value(settings, key, get_value(type(settings)(), key))


def from_dict(cls: type, data: dict[str, Any], where: str, problems: list[str] | None = None):
    """An instance of the settings dataclass ``cls`` (a section, or ``Settings``) from JSON
    ``data`` found at ``where`` (a dotted path, for messages): each field as its default's type
    and within its rules (``problem``); a bad value raises ConfigError, or with a ``problems``
    list is described there and left at its default."""
    kwargs = {}
    for f in fields(cls):
        if f.name not in data:
            continue
        try:
            kwargs[f.name] = field_value(cls, f.name, data[f.name], where, problems)
        except ConfigError as exc:
            if problems is None:
                raise
            problems.append(f"{exc.message} Using the default.")
            continue
        if is_dataclass(kwargs[f.name]):
            continue  # a section: its fields were checked one by one
        message = problem(f"{where}.{f.name}".removeprefix("settings."), kwargs[f.name])
        if message is not None:
            if problems is None:
                raise ConfigError(message)
            problems.append(f"{message} Using the default.")
            del kwargs[f.name]
    return cls(**kwargs)


def field_value(cls: type, name: str, value: Any, where: str, problems: list[str] | None) -> Any:
    """``value`` as the type of the field's default; ConfigError if it cannot be."""
    default = getattr(cls(), name)
    if is_dataclass(default):
        if not isinstance(value, dict):
            raise ConfigError(f"{where}.{name} must be an object, got {value!r}.")
        return from_dict(type(default), value, f"{where}.{name}", problems)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{where}.{name} must be true or false, got {value!r}.")
        return value
    if isinstance(default, (int, float)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ConfigError(f"{where}.{name} must be a number, got {value!r}.")
        if isinstance(default, int) and value != int(value):
            raise ConfigError(f"{where}.{name} must be a whole number, got {value!r}.")
        return type(default)(value)
    if isinstance(default, list):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}.{name} must be a list of strings, got {value!r}.")
        return list(value)
    if isinstance(default, str) and not isinstance(value, str):
        raise ConfigError(f"{where}.{name} must be a string, got {value!r}.")
    return value
