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
from ..chat_prompt import split_prefill

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


class ScriptedReplyLLM(ScriptedLLM):
    """A ``ScriptedLLM`` whose replies can be continued, as llama.cpp's backend continues them.

    A call whose messages end with a user turn takes the next scripted output as the whole reply
    the model would write; a call ending with the assistant's own text continues that reply from
    where the text stops (the text must be a beginning of it, or of the next scripted reply when
    the caller begins a new reply itself). Either way the returned text ends
    at the first of ``params.stop``, which ``stopped_at`` names. So the same script answers a
    chain asked for whole and one asked for step by step, like a deterministic model would.
    Replies in progress are remembered by the messages they follow, so a chain continues as
    written after other calls (a draft, a reader) came between its steps.
    """

    def __init__(self, outputs: Sequence[str], **kwargs):
        super().__init__(outputs, **kwargs)
        self._taken = 0
        self._replies: list[tuple[list, str]] = []  # (the messages a reply follows, the reply), newest last

    @property
    def supports_prefill(self) -> bool:
        return True

    @property
    def remaining(self) -> int:
        return len(self.outputs) - self._taken

    def chat(self, messages: Sequence[ChatMessage], params: GenerationParams = GenerationParams(), *,
             on_token: TokenCallback | None = None, cancel: CancelToken | None = None) -> Completion:
        copied = [dict(m) for m in messages]
        with self._lock:
            prefill = bool(split_prefill(copied)[1])
            context = copied[:-1] if prefill else copied
            if prefill:
                written = copied[-1]["content"]
                reply = next((text for after, text in reversed(self._replies)
                              if after == context and text.startswith(written)), None)
                # A new reply begun by the caller (a prefill): after other messages than any
                # reply in progress, or where none goes on as written. The script's next reply
                # must begin with it too, as a model's own would.
                if reply is None:
                    if not (self._taken < len(self.outputs) and self.outputs[self._taken].startswith(written)):
                        raise ModelError("ScriptedReplyLLM was asked to continue a reply it did not write.",
                                         hint=f"Script a next reply that begins with {written!r}.")
                    reply = self._take(context)
                rest = reply[len(written):]
            else:
                if self._taken >= len(self.outputs):
                    raise ModelError(f"ScriptedReplyLLM ran out of outputs after {len(self.outputs)} replies.",
                                     hint="Script one more output for this test.")
                rest = self._take(context)
            self.calls.append(copied)
            self.params.append(params)
        cuts = [(rest.find(stop), stop) for stop in params.stop if stop and stop in rest]
        at, stopped_at = min(cuts) if cuts else (len(rest), "")
        text = rest[:at]
        for piece in _PIECE.findall(text):
            if on_token is not None:
                on_token(piece)
        words = sum(len(m["content"].split()) for m in copied)
        return Completion(text=text, usage=Usage(words, words, len(text.split())), finish_reason="stop",
                          stopped_at=stopped_at)

    def _take(self, context: list) -> str:
        reply = self.outputs[self._taken]
        self._taken += 1
        self._replies.append((context, reply))
        return reply
