"""Saved KV states of earlier prompts, so a dialogue interrupted by other calls resumes cheaply.

llama.cpp keeps one KV cache, and the backend reuses it for the common prefix of consecutive
prompts. SearChain interleaves two conversations: the Chain-of-Query dialogue (round 2 is round
1's prompt and reply plus the feedback) and the reader's one-off prompts between the rounds. Each
reader call overwrote the chain's cache, so every round, and every question's few-shot prefix,
was evaluated again from the start: with Qwen2.5-1.5B on a 2-core CPU, 2,564 chain prompt tokens
a question where about a third are new.

``PrefixStates`` keeps a few of those caches aside. Just before the live cache is cut back to make
room for an unrelated prompt, the part about to be dropped is saved (the sequence's KV cells only,
``llama_state_seq_get_data``: no logits, ~28 KB a token for Qwen2.5-1.5B); before a prompt is
evaluated, a saved state that shares a longer prefix with it than the live cache does is put back.
The budget is in bytes (``budget_bytes``), least recently used first out, and a state larger than
half of it is not kept: with a big model and a long context one state could be a gigabyte.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

DEFAULT_BUDGET_BYTES = 256 * 1024 ** 2
MIN_SAVED_TOKENS = 64  # shorter prefixes cost less to evaluate again than to keep
MIN_GAIN_TOKENS = 32  # restore only when it saves at least this many evaluations


@dataclass
class _State:
    tokens: np.ndarray  # int32 token ids the KV cells hold, positions 0..n-1
    blob: bytes
    # (prompt + reply bytes, their tokens as generated) of the call that filled the cache: the
    # next round's prompt starts with these bytes, and must be given these tokens back, since
    # tokenising the reply again could split it otherwise and miss the saved cells.
    history: tuple[bytes, list[int]] | None = None


def common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    n = min(len(a), len(b))
    if n == 0:
        return 0
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if differ.size else n


class PrefixStates:
    """Saved KV states for one llama.cpp context (sequence 0), newest last."""

    def __init__(self, budget_bytes: int = DEFAULT_BUDGET_BYTES):
        self.budget_bytes = budget_bytes
        self._states: list[_State] = []
        self.saved = 0  # states taken (for tests and benchmarks)
        self.restored = 0

    def __len__(self) -> int:
        return len(self._states)

    @property
    def bytes(self) -> int:
        return sum(len(s.blob) for s in self._states)

    def clear(self) -> None:
        self._states.clear()

    def history_for(self, data: bytes) -> tuple[bytes, list[int]] | None:
        """The longest saved history whose bytes begin ``data`` (a prompt), if any."""
        found = None
        for state in self._states:
            if state.history and data.startswith(state.history[0]) and \
                    (found is None or len(state.history[0]) > len(found[0])):
                found = state.history
        return found

    def save(self, ctx, tokens: np.ndarray, history: tuple[bytes, list[int]] | None = None) -> bool:
        """Keep the live cache's ``tokens`` (all it holds) before it is cut; False if not worth it
        or too big. A state that is a prefix of another one kept is dropped as redundant."""
        import llama_cpp

        if len(tokens) < MIN_SAVED_TOKENS or self.budget_bytes <= 0:
            return False
        size = int(llama_cpp.llama_state_seq_get_size(ctx, 0))
        if size <= 0 or size > self.budget_bytes // 2:
            return False
        buffer = (ctypes.c_uint8 * size)()
        written = int(llama_cpp.llama_state_seq_get_data(ctx, buffer, size, 0))
        if written <= 0:
            return False
        tokens = np.array(tokens, dtype=np.int32)
        self._states = [s for s in self._states
                        if not (len(s.tokens) <= len(tokens)
                                and common_prefix(s.tokens, tokens) == len(s.tokens))]
        if history is not None and not history[1]:
            history = None
        self._states.append(_State(tokens, bytes(memoryview(buffer)[:written]), history))
        while self.bytes > self.budget_bytes:
            self._states.pop(0)
        self.saved += 1
        return True

    def best(self, prompt: np.ndarray, live_reuse: int) -> tuple[int, int]:
        """(index of the saved state to restore, tokens it gives) or (-1, 0) when none beats the
        live cache's ``live_reuse`` by ``MIN_GAIN_TOKENS``. The last prompt token is never
        counted: it is evaluated anyway, for fresh logits."""
        best, gain = -1, live_reuse + MIN_GAIN_TOKENS
        for index, state in enumerate(self._states):
            usable = min(common_prefix(state.tokens, prompt), len(prompt) - 1)
            if usable >= gain:
                best, gain = index, usable
        return (best, gain) if best >= 0 else (-1, 0)

    def restore(self, ctx, index: int) -> np.ndarray:
        """Put saved state ``index`` into sequence 0 (emptied first); return the tokens it holds.
        The caller cuts it to the usable prefix and evaluates the rest."""
        import llama_cpp

        state = self._states.pop(index)
        self._states.append(state)  # most recently used last
        memory = llama_cpp.llama_get_memory(ctx)
        llama_cpp.llama_memory_seq_rm(memory, -1, 0, -1)
        buffer = (ctypes.c_uint8 * len(state.blob)).from_buffer_copy(state.blob)
        if int(llama_cpp.llama_state_seq_set_data(ctx, buffer, len(state.blob), 0)) == 0:
            self._states.pop()
            raise RuntimeError("llama.cpp refused a saved KV state")
        self.restored += 1
        return state.tokens
