"""GGUF header facts remembered between runs, so listing the models on a computer a second time
reads no header.

A real model's header holds its whole vocabulary and merges (Qwen's: ~150,000 of each); the
reader leaps over them (``gguf_header.py``), but a header still costs a few milliseconds and a
few megabytes read, and with dozens of models in LM Studio, Ollama and the Hugging Face cache,
on a cold disk, that adds up at every look.
The facts of a file stay valid while its identity, size and modification time do, so they are
kept under that key: in memory for the run, and in ``<cache>/gguf-facts.json`` (written
atomically) when a path is given. A file that changed, or one that failed to read, is read again.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, fields, replace
from pathlib import Path

from ...files import atomic_write_text
from .gguf_info import ModelFacts

CACHE_FILE = "gguf-facts.json"
FORMAT = 1  # bump when ModelFacts changes meaning; an older file is then ignored
LIMIT = 2048  # entries kept; past it the file starts afresh (a cache, not a record)
_FIELDS = {f.name for f in fields(ModelFacts)} - {"path"}


class FactsCache:
    """``get``/``put`` facts by file; ``save`` writes the file when something new was learnt."""

    def __init__(self, path: Path | None = None):
        self.path = Path(path) if path else None
        self._entries: dict[str, dict] = self._load()
        self._dirty = False

    @classmethod
    def in_cache_dir(cls, cache_dir: Path) -> "FactsCache":
        return cls(Path(cache_dir) / CACHE_FILE)

    def get(self, path: Path) -> ModelFacts | None:
        key = _key(path)
        entry = self._entries.get(key) if key else None
        if entry is None:
            return None
        try:
            return ModelFacts(path=path, **{k: v for k, v in entry.items() if k in _FIELDS})
        except TypeError:  # written by a version whose ModelFacts had other fields
            return None

    def put(self, path: Path, facts: ModelFacts) -> None:
        key = _key(path)
        if key is None:
            return
        if len(self._entries) >= LIMIT:
            self._entries.clear()
        self._entries[key] = {k: v for k, v in asdict(replace(facts, path=Path())).items() if k in _FIELDS}
        self._dirty = True

    def save(self) -> None:
        """Write the file if anything was added (a read-only or full disk only costs the next
        run its header reads, so a failed write is not an error)."""
        if not (self._dirty and self.path):
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.path, json.dumps({"format": FORMAT, "entries": self._entries}))
            self._dirty = False
        except OSError:
            pass

    def _load(self) -> dict[str, dict]:
        if not self.path:
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("entries"), dict):
            return {}
        return data["entries"]


def _key(path: Path) -> str | None:
    """The file's identity, size and modification time, behind any links; None if unreadable."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"{os.path.realpath(path)}|{st.st_dev}|{st.st_ino}|{st.st_size}|{st.st_mtime_ns}"
