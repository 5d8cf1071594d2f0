"""Fetching passages for hits, safely from several threads.

A ``PassageStore`` connection must be used by one thread at a time, so retrievers share one
through this lock-guarded wrapper. Ids the index knows but the corpus no longer has (a passage
deleted since the last build) are skipped rather than failing the whole search.
"""

from __future__ import annotations

import threading
from typing import Callable, TypeVar

from ..types import Passage

T = TypeVar("T")


class PassageSource:
    def __init__(self, store):
        self._store = store
        self._lock = threading.Lock()

    @property
    def corpus(self) -> str:
        return self._store.corpus

    def run(self, fn: Callable[[object], T]) -> T:
        """Call ``fn(store)`` holding the lock (for queries beyond fetching by id)."""
        with self._lock:
            return fn(self._store)

    def fetch(self, ids: list[int]) -> dict[int, Passage]:
        """``{id: Passage}`` for the ids still in the corpus."""
        if not ids:
            return {}
        with self._lock:
            return self._store.passages_by_id(ids)

    def close(self) -> None:
        with self._lock:
            self._store.close()
