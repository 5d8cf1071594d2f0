"""What every answering strategy is built from: the model-calling ``Generator``, the
``Retriever`` it searches, the ``LoopOutcome`` it returns, and ``locate`` for the span of an
answer in a passage. SearChain's loop, GenGround, GEEK and the baselines all share these.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Protocol

from ..errors import Cancelled
from ..events import CancelToken, EventCallback, check
from ..llm.base import ChatMessage, Completion, GenerationParams
from ..llm.chat_prompt import strip_think
from ..types import Hit
from .events import TokenGenerated
from .result import Branch, Node


class Retriever(Protocol):
    def search(self, query: str, k: int) -> list[Hit]: ...


@dataclass
class LoopOutcome:
    branches: list[Branch]
    path: list[Node]
    stop_reason: str  # finish | r_max | repeated_chain | no_ir | unparseable | stalled
    rounds: int


@dataclass
class Generator:
    """Calls the LLM with streaming, cancellation and token accounting (shared by all phases)."""

    llm: Any
    params: GenerationParams
    use_grammar: bool
    on_event: EventCallback | None
    cancel: CancelToken | None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    stop: tuple[str, ...] = field(default=())
    # phase -> [prompt tokens, completion tokens], every call counted (the reader's too).
    tokens_by_phase: dict[str, list[int]] = field(default_factory=dict)
    # phase -> what its calls cost (``phase_cost``): prompt tokens, of those evaluated (not
    # reused from the KV cache), completion tokens, seconds, prompt seconds, calls (bench loop).
    costs_by_phase: dict[str, dict[str, float]] = field(default_factory=dict)

    def record(self, phase: str, usage: Any, completion: Any = None) -> None:
        """Count one model call's tokens, in the totals and under ``phase``; ``completion`` (the
        call's ``Completion``) adds its evaluated tokens and seconds to ``costs_by_phase``."""
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        counts = self.tokens_by_phase.setdefault(phase, [0, 0])
        counts[0] += usage.prompt_tokens
        counts[1] += usage.completion_tokens
        add_cost(self.costs_by_phase, phase, usage, completion)

    @property
    def grammars_apply(self) -> bool:
        """Whether a grammar given to ``chat`` constrains the model (set on, and the backend
        takes GBNF)."""
        return bool(self.use_grammar and getattr(self.llm, "supports_grammar", False))

    def chat(self, messages: list[ChatMessage], phase: str, grammar: str | None, *,
             max_tokens: int | None = None, stop: tuple[str, ...] | None = None,
             stop_at: tuple[str, ...] = (),
             on_piece: Callable[[str], None] | None = None) -> Completion:
        """One model call. ``stop`` replaces the generator's own grammar-less stops for this call;
        ``stop_at`` ends it with or without a grammar (a chain written step by step stops at the
        next step); ``max_tokens`` caps it below the configured budget (never above); ``on_piece``
        sees each decoded piece too (after the ``TokenGenerated`` event)."""
        check(self.cancel)
        with_grammar = grammar is not None and self.grammars_apply
        extra_stops = self.stop if stop is None else stop
        stops = self.params.stop + tuple(stop_at) + (() if with_grammar else extra_stops)
        params = replace(self.params, grammar=grammar if with_grammar else None, stop=stops)
        if max_tokens is not None:
            params = replace(params, max_tokens=min(params.max_tokens, max_tokens))
        on_token: Callable[[str], None] | None = None
        if self.on_event is not None:
            def on_token(piece: str) -> None:
                self.on_event(TokenGenerated(piece, phase))
                if on_piece is not None:
                    on_piece(piece)
        completion = self.llm.chat(messages, params, on_token=on_token, cancel=self.cancel)
        self.record(phase, completion.usage, completion)
        if completion.finish_reason == "cancelled":
            raise Cancelled()
        check(self.cancel)
        # A reasoning model's think block is neither the chain to parse nor the answer (#22).
        text = strip_think(completion.text)
        return completion if text == completion.text else replace(completion, text=text)


COST_KEYS = ("prompt", "evaluated", "completion", "seconds", "prompt_seconds", "calls")


def add_cost(costs: dict[str, dict[str, float]], phase: str, usage: Any, completion: Any = None) -> None:
    """Add one call to ``costs[phase]`` (keys ``COST_KEYS``)."""
    cost = costs.setdefault(phase, dict.fromkeys(COST_KEYS, 0))
    cost["prompt"] += usage.prompt_tokens
    cost["evaluated"] += getattr(usage, "prompt_tokens_evaluated", usage.prompt_tokens)
    cost["completion"] += usage.completion_tokens
    cost["seconds"] += float(getattr(completion, "seconds", 0.0) or 0.0)
    cost["prompt_seconds"] += float(getattr(completion, "prompt_seconds", 0.0) or 0.0)
    cost["calls"] += 1


def locate(answer: str | None, text: str) -> tuple[int, int] | None:
    """Character span of ``answer`` in ``text`` (case-insensitive), or None."""
    if not answer:
        return None
    needle = answer.strip().rstrip(".").strip()
    if not needle:
        return None
    i = text.lower().find(needle.lower())
    return (i, i + len(needle)) if i >= 0 else None
