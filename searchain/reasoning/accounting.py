"""Count the tokens of model calls the engine does not make itself: the LLM reader's.

A reader built over the chat model (``searchain.reader.llm_reader.LLMReader``) calls the model
directly, one call per passage it reads, so those calls never went through ``Generator`` and were
missing from a run's token counts. ``metered_reader`` gives the run its own shallow copy of such
a reader whose ``llm`` reports each call's usage to the run's ``Generator`` under the "reader"
phase. Readers without a model (DPR, the lexical test reader) are returned unchanged.
"""

from __future__ import annotations

import copy
from typing import Any

PHASE_READER = "reader"


class MeteredLLM:
    """Wraps an LLM: every ``chat``/``complete`` is passed through and its usage recorded."""

    def __init__(self, llm: Any, sink: Any, phase: str = PHASE_READER):
        self._llm = llm
        self._sink = sink  # anything with record(phase, usage): the run's Generator
        self._phase = phase

    def chat(self, *args, **kwargs):
        completion = self._llm.chat(*args, **kwargs)
        self._sink.record(self._phase, completion.usage, completion)
        return completion

    def complete(self, *args, **kwargs):
        completion = self._llm.complete(*args, **kwargs)
        self._sink.record(self._phase, completion.usage, completion)
        return completion

    def __getattr__(self, name: str):  # name, supports_grammar, tokenize, ...: the model's own
        return getattr(self._llm, name)


def metered_reader(reader: Any, sink: Any) -> Any:
    """``reader`` with its model calls counted by ``sink`` (a per-run copy; the shared reader is
    left untouched, so two runs in parallel never count each other's calls)."""
    llm = getattr(reader, "llm", None)
    if reader is None or llm is None or not callable(getattr(llm, "chat", None)):
        return reader
    metered = copy.copy(reader)
    metered.llm = MeteredLLM(llm, sink)
    return metered
