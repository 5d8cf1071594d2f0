"""An LLM that replays fixed outputs: for unit tests of the reasoning loop and ``bench engine``.

It implements the ``LLM`` protocol faithfully (streaming, cancellation, usage counts, recorded
inputs) without a model, so the engine's logic can be tested branch by branch and its overhead
measured against a known, fixed per-call latency.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Sequence

from ...errors import ModelError
from ...events import CancelToken
from ..base import ChatMessage, Completion, GenerationParams, TokenCallback, Usage

_PIECE = re.compile(r"\S+\s*|\s+")


class ScriptedLLM:
    """Returns ``outputs[i]`` on the i-th call (``complete`` or ``chat``).

    ``latency_s`` is slept once per call (no busy work), so a benchmark knows exactly how long
    the "model" took. Every call's input is kept in ``calls`` (the prompt string, or the list of
    messages). Running out of outputs raises ``ModelError``: a test scripted too few turns.
    """

    def __init__(self, outputs: Sequence[str], *, latency_s: float = 0.0, name: str = "scripted",
                 grammar: bool = True):
        self.outputs = list(outputs)
        self.latency_s = latency_s
        self.name = name
        self._grammar = grammar
        self.calls: list[str | list[ChatMessage]] = []
        self.params: list[GenerationParams] = []
        self._lock = threading.Lock()

    @property
    def supports_grammar(self) -> bool:
        return self._grammar

    @property
    def remaining(self) -> int:
        return len(self.outputs) - len(self.calls)

    def complete(self, prompt: str, params: GenerationParams = GenerationParams(), *,
                 on_token: TokenCallback | None = None, cancel: CancelToken | None = None) -> Completion:
        return self._reply(prompt, len(prompt.split()), params, on_token, cancel)

    def chat(self, messages: Sequence[ChatMessage], params: GenerationParams = GenerationParams(), *,
             on_token: TokenCallback | None = None, cancel: CancelToken | None = None) -> Completion:
        copied = [dict(m) for m in messages]
        words = sum(len(m["content"].split()) for m in copied)
        return self._reply(copied, words, params, on_token, cancel)

    def close(self) -> None:
        pass

    def _reply(self, given, prompt_tokens: int, params: GenerationParams,
               on_token: TokenCallback | None, cancel: CancelToken | None) -> Completion:
        started = time.perf_counter()
        with self._lock:
            index = len(self.calls)
            if index >= len(self.outputs):
                raise ModelError(
                    f"ScriptedLLM ran out of outputs after {len(self.outputs)} calls.",
                    hint="Script one more output for this test.",
                )
            self.calls.append(given)
            self.params.append(params)
            text = self.outputs[index]
        if self.latency_s:
            time.sleep(self.latency_s)
        pieces = _PIECE.findall(text)
        emitted: list[str] = []
        finish = "stop"
        for piece in pieces:
            if cancel is not None and cancel.cancelled:
                finish = "cancelled"
                break
            emitted.append(piece)
            if on_token is not None:
                on_token(piece)
        out = "".join(emitted)
        return Completion(
            text=out,
            usage=Usage(prompt_tokens, prompt_tokens, len(out.split())),
            finish_reason=finish,
            seconds=time.perf_counter() - started,
        )
