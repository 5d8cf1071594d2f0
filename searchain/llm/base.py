"""The interface every LLM backend implements, and the value types it returns.

The reasoning engine only ever talks to ``LLM``; backends (llama.cpp in-process, an
OpenAI-compatible HTTP server, a scripted replay for unit tests) live beside this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence, TypedDict, runtime_checkable

from ..events import CancelToken


class ChatMessage(TypedDict):
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True)
class GenerationParams:
    max_tokens: int = 512
    temperature: float = 0.0
    seed: int = 0
    stop: tuple[str, ...] = ()
    grammar: str | None = None  # GBNF source text; backends without grammar support ignore it
    logprobs: bool = False  # ask for per-token log-probabilities (the LLM reader uses them)


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int  # tokens in the whole prompt
    prompt_tokens_evaluated: int  # of those, how many had to be evaluated (not reused from KV cache)
    completion_tokens: int


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage
    finish_reason: str  # "stop" | "length" | "cancelled"
    seconds: float = 0.0  # wall time of the call
    prompt_seconds: float = 0.0  # time spent evaluating the prompt
    token_logprobs: tuple[float, ...] = field(default=())  # filled when params.logprobs
    dropped_messages: int = 0  # chat(): oldest turns dropped to fit the context window
    stopped_at: str = ""  # the stop sequence that ended the reply ("" when none did)

    @property
    def decode_tokens_per_s(self) -> float:
        """Generated tokens per second of generation time (prompt evaluation excluded)."""
        decode = self.seconds - self.prompt_seconds
        return self.usage.completion_tokens / decode if decode > 0 else 0.0


TokenCallback = Callable[[str], None]


@runtime_checkable
class LLM(Protocol):
    """A loaded model. Calls are blocking; ``on_token`` streams text pieces as they are decoded,
    and ``cancel`` (set from any thread) stops generation at the next token with
    ``finish_reason == "cancelled"``."""

    name: str

    @property
    def supports_grammar(self) -> bool: ...

    def complete(
        self,
        prompt: str,
        params: GenerationParams = GenerationParams(),
        *,
        on_token: TokenCallback | None = None,
        cancel: CancelToken | None = None,
    ) -> Completion: ...

    def chat(
        self,
        messages: Sequence[ChatMessage],
        params: GenerationParams = GenerationParams(),
        *,
        on_token: TokenCallback | None = None,
        cancel: CancelToken | None = None,
    ) -> Completion: ...

    def close(self) -> None: ...
