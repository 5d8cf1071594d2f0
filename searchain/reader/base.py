"""The reader interface used by SearChain's IR side (verification and completion)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class ReaderResult:
    """The answer span ``passage_text[start:end]`` and the reader's confidence in it.

    ``confidence`` is on the reader's own scale (DPR: the raw passage relevance logit, compared
    with θ = 1.5; the LLM reader: a probability). ``threshold`` is that reader's θ.
    """

    answer: str
    start: int
    end: int
    confidence: float
    threshold: float


@runtime_checkable
class Reader(Protocol):
    name: str

    def read(self, question: str, title: str, passage_text: str) -> ReaderResult: ...

    def read_many(self, question: str, passages: list[tuple[str, str]]) -> list[ReaderResult]: ...
