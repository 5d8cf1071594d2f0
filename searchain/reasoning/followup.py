"""Follow-up questions: rewrite "When was he born?" into a question that stands on its own.

SearChain plans, retrieves and verifies against the question it is given, so a follow-up such as
"And where was she born?" has nothing to search for until the conversation fills in "she". When a
question comes after earlier turns, the model first rewrites it with those turns in view (the
"condense question" step of conversational retrieval). The rewrite then drives planning, retrieval
and tracing; the result keeps both what was typed and what was searched, so the app can show it.

The rewrite is one grammar-constrained line, and a reply that is empty, runaway or unparsable
falls back on the question as typed: a bad rewrite may search worse, but never loses the question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from .chain.grammar import DEFAULT_STANDALONE_CHARS as STANDALONE_CHARS
from .chain.grammar import standalone_grammar
from .chain.parser import strip_marks

__all__ = ["PriorTurn", "STANDALONE_CHARS", "format_turns", "parse_standalone", "rewrite_followup",
           "standalone_grammar"]

# What one earlier turn contributes to the rewrite prompt (answers can run long; the names the
# follow-up refers to are nearly always near their start).
TURN_ANSWER_CHARS = 400
# Generation budget for the rewrite: one line of at most STANDALONE_CHARS characters.
REWRITE_MAX_TOKENS = 128

_REPLY = re.compile(r"\[Question\]:\s*(.*)")


@dataclass(frozen=True)
class PriorTurn:
    """An earlier question of the conversation and the answer it got (marks removed)."""

    question: str
    answer: str


def format_turns(history: Sequence[PriorTurn]) -> str:
    """The earlier turns as the prompt shows them, oldest first."""
    blocks = []
    for turn in history:
        answer = " ".join(strip_marks(turn.answer or "").split())
        if len(answer) > TURN_ANSWER_CHARS:
            answer = answer[:TURN_ANSWER_CHARS].rstrip() + " ..."
        blocks.append(f"[Earlier Question]: {' '.join(turn.question.split())}\n[Earlier Answer]: {answer or '(no answer)'}")
    return "\n".join(blocks)


def parse_standalone(text: str, asked: str) -> str:
    """The rewritten question in the model's reply, or ``asked`` when the reply holds none."""
    match = _REPLY.search(text or "")
    candidate = match.group(1) if match else (text or "")
    candidate = candidate.strip().splitlines()[0].strip() if candidate.strip() else ""
    candidate = candidate.strip("\"'“”‘’ ").strip()
    if not candidate or len(candidate) > STANDALONE_CHARS or not re.search(r"\w", candidate):
        return asked
    return candidate


def rewrite_followup(question: str, history: Sequence[PriorTurn], *, generator: Any, prompts: Any,
                     max_turns: int, phase: str) -> str:
    """Ask the model for a standalone version of ``question`` given the last ``max_turns`` turns."""
    turns = list(history)[-max_turns:] if max_turns > 0 else []
    if not turns:
        return question
    messages = [{"role": "user", "content": prompts.followup(question, format_turns(turns))}]
    completion = generator.chat(messages, phase, standalone_grammar(), max_tokens=REWRITE_MAX_TOKENS,
                                stop=("\n[", "\n\n"))
    return parse_standalone(completion.text, question)
