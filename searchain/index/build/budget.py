"""What an index build may use of this machine: its share of the memory (the app also holds an
LLM), checked before embedding starts and by the plan."""

from __future__ import annotations

from ...machine import total_memory_bytes

MAX_RAM_SHARE = 0.75  # of physical memory, for the index


def index_memory_limit() -> int | None:
    """Bytes an index build may use here (None where the OS does not say)."""
    total = total_memory_bytes()
    return int(MAX_RAM_SHARE * total) if total else None
