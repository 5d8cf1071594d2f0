"""A Chain-of-Query written one step at a time, so that no step is written that IR would discard.

In a round of Algorithm 1 the LLM writes a whole chain, then IR walks it node by node and stops at
the first node that needs feedback: every step written after that node, and the chain's
``[Final Content]`` (the final answer is written afterwards, from the passages), is decoded and
thrown away. With Qwen2.5-Coder-1.5B on HotpotQA that was half of the chain's decoded characters,
and decoding is most of a CPU's time for the chain (BENCHMARKS.md, "Loop speed levers").

``StepWriter`` asks for the reply in pieces instead: each call stops where the next step or the
final line would begin, the caller checks the new step, and only if it passes is the reply
continued from where it stopped (the backend's ``supports_prefill``: a trailing assistant message
is continued, and its KV cache is kept aside while the reader runs, ``llm/llama/prefix_states.py``).
Under greedy decoding the steps are the ones the whole chain would have had, up to the node that
takes feedback; the next round sees the reply only up to that node, which is the branch the
paper grows the next chain from.

Each call begins with a ``[Query n]:`` the grammar forces (a call continues where a step begins),
so the writer writes it into the reply instead of having it decoded: 5 tokens a call, evaluated
(~3x cheaper a token on a CPU) rather than decoded, and the same text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from ...llm.base import ChatMessage
from ..chain.grammar import coq_grammar
from ..chain.parser import ParsedStep, parse_chain
from ..events import TokenGenerated
from ..parts import Generator

# Where a step call stops: the start of the next step, or of the chain's closing line. Each stop
# is as short as the choice it marks: once the model wrote "[Query", "[Final" or "[Unsolved",
# the grammar forces the rest of that header, and decoding it would only be thrown away (the
# next call writes a step's header itself). Field text holds no "[", so none of these can occur
# inside a query or an answer. Qwen: "\n", "[", "Query" (not the " " after it); "[", "Final"
# (not " Content", "]:"); "[", "Un", "s", "olved" (not " Query", "]:").
NEXT_STEP = "\n[Query"
FINAL_LINE = "[Final Content]"
FINAL_STOP = "[Final"  # no line break: a call may begin with the final line
STEP_ENDS = (NEXT_STEP, FINAL_STOP)
# An [Unsolved Query] line repeats its step's query word for word (the format says so): the
# writer stops where it begins and writes the copy itself (evaluated later, ~3x cheaper a token
# than decoding it on a CPU; an inline feedback replaces the line without evaluating it at all).
UNSOLVED_LINE = "\n[Unsolved Query]"
UNSOLVED_STOP = "\n[Unsolved"

# reasoning.chain_steps: a step per call (the default); whole, as the paper; whole, but ending
# where the chain's own [Final Content] would begin (the final answer is written apart).
CHAIN_STEPS = ("stepwise", "whole", "whole_no_final")

# reasoning.feedback_style: IR's feedback as a user turn after which the model writes a new chain
# (the paper's), or, stepwise only, written into the reply in place of the model's answer and the
# chain continued (no turn to evaluate, no settled steps copied out again; the default).
FEEDBACK_STYLES = ("turn", "inline")

# The line a step's answer starts on: "[Answer 2]:" or "[Unsolved Query]:" (any case or spacing).
_ANSWER_LINE = re.compile(r"^[ \t]*\[[ \t]*(?:answer|unsolved[ \t]+query)[ \t]*\d*[ \t]*\]", re.IGNORECASE | re.MULTILINE)
_LAST_QUERY = re.compile(r"\[[ \t]*query[ \t]*\d*[ \t]*\][ \t]*:?([^\n]*)\Z", re.IGNORECASE)
_QUERY_NUMBER = re.compile(r"\[[ \t]*query[ \t]*(\d+)[ \t]*\]", re.IGNORECASE)


def can_write_stepwise(llm: object) -> bool:
    """Whether ``llm`` continues a trailing assistant message (llama.cpp in process or in its
    worker; not a server, whose chat API has no such promise)."""
    return bool(getattr(llm, "supports_prefill", False))


@dataclass
class StepWriter:
    """One round's reply, written a step per call. ``text`` is the reply so far; ``done`` once
    the model reached its final line (``reached_final``), ended its reply, ran out of tokens, or
    wrote ``max_nodes`` steps."""

    gen: Generator
    messages: list[ChatMessage]
    max_nodes: int
    phase: str = "chain"
    text: str = ""
    done: bool = False
    reached_final: bool = False
    written: int = 0  # steps in the reply so far, as written (before any clean-up)
    calls: int = 0
    budget: int = field(default=-1)
    # The grammar of the rest of a chain from step ``start`` on, called with ``coq_grammar``'s
    # ``header_written`` and ``may_end`` (None: ``coq_grammar``'s own).
    grammar_for: Callable[..., str] | None = None

    last_call_start: int = 0  # where the text of the last call begins in ``text``
    copy_unsolved: bool = True  # write an [Unsolved Query] line's copy of the query, not decode it
    write_headers: bool = True  # write the [Query n]: a grammar begins each call with, not decode it
    may_end: bool = False  # the next call may write the final line at once (after IR's answer)

    def __post_init__(self) -> None:
        if self.budget < 0:
            self.budget = int(self.gen.params.max_tokens)

    def write(self) -> list[ParsedStep]:
        """Write up to the end of the next step; return every step the reply now holds."""
        if self.written >= self.max_nodes or self.budget <= 0 or self.calls > 2 * self.max_nodes:
            self.done = True
        if self.done:
            return list(parse_chain(self.text).steps)
        start = self.written + 1
        may_end, self.may_end = self.may_end, False
        # A call that must begin a step begins with its header: written here, not decoded, where
        # the grammar would force it (without one the model may also conclude at once).
        forced = self.write_headers and not may_end and self.gen.grammars_apply
        header = f"[Query {start}]:" if forced else ""
        options = {"header_written": bool(header), "may_end": may_end}
        grammar = (self.grammar_for(start, **options) if self.grammar_for
                   else coq_grammar(self.max_nodes, start=start, **options))
        self.last_call_start = len(self.text)
        self._write(header)
        messages = list(self.messages)
        if self.text:
            messages.append({"role": "assistant", "content": self.text})
        stops = STEP_ENDS + (UNSOLVED_STOP,) if self.copy_unsolved else STEP_ENDS
        completion = self.gen.chat(messages, self.phase, grammar, stop_at=stops, max_tokens=self.budget)
        self.calls += 1
        self.budget -= max(1, completion.usage.completion_tokens)
        if header and not completion.text.strip():
            self.text = self.text[:-len(header)]  # the model wrote nothing after it: no empty step
        self.text += completion.text
        if completion.stopped_at == UNSOLVED_STOP:
            query = _LAST_QUERY.search(self.text)
            if query is not None:
                self._write(f"{UNSOLVED_LINE}: {query.group(1).strip()}")
        steps = list(parse_chain(self.text).steps)
        self.written = len(steps)
        if completion.stopped_at in (NEXT_STEP, UNSOLVED_STOP):
            # A step ended (or a preamble did): the next call starts the next step on its own line.
            self._write("\n")
        else:
            # The final line, the end of the reply or the token budget: the chain is complete.
            self.done = True
            self.reached_final = completion.stopped_at == FINAL_STOP
        return steps

    def _write(self, text: str) -> None:
        """Add text the writer writes itself (a header, a line break, an unsolved line's copy) to
        the reply, streamed as the model's own is, so the chain on screen reads as it is written.
        IR's answer written in place is not streamed: a stream cannot take back the model's; the
        tree shows it."""
        self.text += text
        if text and self.gen.on_event is not None:
            self.gen.on_event(TokenGenerated(text, self.phase))

    def answer_in_place(self, answer: str, reference: str = "") -> bool:
        """Replace the answer of the step the last call wrote with ``answer`` (IR's), followed by
        a ``[Reference]:`` line quoting ``reference`` (the passage it came from) where one is
        given, dropping anything written after it, so that the next ``write`` continues the
        chain from there.
        False, and nothing changed, where that step has no answer line of its own to replace
        (an answer on the query's line, say): the caller sends its feedback as a turn instead."""
        chunk = self.text[self.last_call_start:]
        query = _QUERY_NUMBER.search(chunk)
        line = _ANSWER_LINE.search(chunk, query.end()) if query else None
        if line is None or self.written < 1:
            return False
        number = query.group(1)
        self.text = f"{self.text[:self.last_call_start + line.start()]}[Answer {number}]: {answer}\n"
        if reference:  # one line, and no brackets that the parser could take for a marker
            quoted = " ".join(reference.split()).replace("[", "(").replace("]", ")")
            self.text += f"[Reference]: {quoted}\n"
        self.written = len(parse_chain(self.text).steps)
        self.done = self.reached_final = False
        # With IR's answer in view the model may conclude at once: a required next step made
        # chains ask past the answer (a third step where two hops were asked; BENCHMARKS.md).
        self.may_end = True
        return True
