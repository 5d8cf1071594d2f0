"""A conversation as Markdown: each question, each answer, then its numbered references.

Each reference gives the passage's title, where in its file it is (page, heading path), where it
came from, and the full passage text with the cited span in bold, so the exported file stands on
its own without the corpus.

In an export, every text a user, a model or a corpus wrote goes through ``_text``: ``&``, ``<``
and ``>`` become entities, because many Markdown viewers render inline HTML and a question
holding ``<script>`` or ``<img src=x>`` must show as those characters. Ids go in code spans
(``_code``), where nothing is HTML, verbatim. The app's clipboard copy asks for the text as is
(``escape_html=False``): it is pasted as the user saw it, often where entities would show.
"""

from __future__ import annotations

import re
from typing import Callable

from ..reasoning.result import (
    DECISION_COMPLETED, DECISION_CORRECTED, DECISION_NO_ANSWER, DECISION_NOT_CONFIRMED, DECISION_NOT_READ,
    DECISION_PASS, AnswerResult, Reference, honest_decision,
)
from .records import (ROLE_USER, STATE_CANCELLED, STATE_FAILED, STATE_STREAMING, Conversation,
                      Message)

# How each step of the reasoning path was checked (runs stored before #23 are judged again).
_FATES = {
    DECISION_PASS: "verified",
    DECISION_NOT_CONFIRMED: "not confirmed",
    DECISION_NO_ANSWER: "no answer in passage",
    DECISION_NOT_READ: "yes/no step, not read",
    DECISION_CORRECTED: "corrected by IR",
    DECISION_COMPLETED: "completed by IR",
}

_STATE_NOTES = {
    STATE_STREAMING: "*(this answer was interrupted before it finished)*",
    STATE_CANCELLED: "*(stopped before it finished)*",
}


def _text(text: str | None) -> str:
    """User, model or corpus text as Markdown prose that cannot turn into HTML."""
    return (text or "").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _as_is(text: str | None) -> str:
    return text or ""


def _code(text: str) -> str:
    """``text`` as an inline code span, fenced by more backticks than it holds in a row."""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or len(fence) > 1 else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def conversation_markdown(conversation: Conversation) -> str:
    lines = [f"# {_text(conversation.title)}", "",
             f"*Started {conversation.created_at}, last updated {conversation.updated_at}, "
             f"{conversation.message_count} messages.*", ""]
    for message in conversation.messages:
        lines.extend(_message_lines(message))
    return "\n".join(lines).rstrip() + "\n"


def answer_markdown(result: AnswerResult, *, escape_html: bool = True) -> str:
    """One answer with its references (the app copies it to the clipboard with
    ``escape_html=False``: the text as the user saw it)."""
    text = _text if escape_html else _as_is
    lines = []
    if result.standalone_question:
        lines += [f"*Answered as: {text(result.standalone_question)}*", ""]
    lines += [text(result.final_content) or "*(no text)*", ""]
    if result.references:
        lines += ["References:", ""]
        for ref in result.references:
            lines.extend(_reference_lines(ref, text))
    if result.path:
        lines += ["Reasoning path:", "", *_path_lines(result, text), ""]
    return "\n".join(lines).rstrip() + "\n"


def _path_lines(result: AnswerResult, text: Callable[[str | None], str] = _text) -> list[str]:
    """One line per step of the final path with how IR checked it."""
    lines = []
    for n, node in enumerate(result.path, start=1):
        decision = honest_decision(node)
        fate = _FATES.get(decision, decision.replace("_", " "))
        lines.append(f"{n}. {text(node.query)} — {text(node.answer) or '?'} *({fate})*")
    return lines


def _message_lines(message: Message) -> list[str]:
    if message.role == ROLE_USER:
        return ["## Question", "", _text(message.content), ""]
    lines = ["## Answer", ""]
    if message.result is not None and message.result.standalone_question:
        lines += [f"*Answered as: {_text(message.result.standalone_question)}*", ""]
    lines += [_text(message.content) or "*(no text)*", ""]
    if message.state == STATE_FAILED:
        lines += [f"*(failed: {_text(message.error) or 'unknown error'})*", ""]
    elif message.state in _STATE_NOTES:
        lines += [_STATE_NOTES[message.state], ""]
    if message.run is not None:
        run = message.run
        lines += [f"*Mode {_text(run.mode) or '?'}, model {_text(run.model) or '?'}, "
                  f"corpus {_text(run.corpus) or '?'}, reader {_text(run.reader) or '?'}.*", ""]
    if message.result is not None and message.result.references:
        lines += ["### References", ""]
        for ref in message.result.references:
            lines.extend(_reference_lines(ref))
    if message.result is not None and message.result.path:
        lines += ["### Reasoning path", "", *_path_lines(message.result), ""]
    return lines


def _reference_lines(ref: Reference, text: Callable[[str | None], str] = _text) -> list[str]:
    p = ref.passage
    origin = f"corpus {_code(p.corpus)}, passage {_code(p.pid)}"
    if p.source:
        origin += f", from {text(p.source)}"
    # ", report.pdf, p. 12 - 3.2 Results"
    where = f", {text(p.location())}" if p.location() else ""
    return [f"[{ref.mark}] **{text(p.title)}**{where} ({origin})", "",
            *_quoted(_with_span(ref, text)), ""]


def _with_span(ref: Reference, text: Callable[[str | None], str]) -> str:
    body = ref.passage.text
    if ref.span is None:
        return text(body)
    start, end = ref.span
    if not (0 <= start < end <= len(body)):
        return text(body)  # an odd span must not garble the passage
    return f"{text(body[:start])}**{text(body[start:end])}**{text(body[end:])}"


def _quoted(text: str) -> list[str]:
    return [f"> {line}" if line else ">" for line in text.splitlines() or [""]]
