"""A conversation as Markdown: each question, each answer, then its numbered references.

Each reference gives the passage's title, where in its file it is (page, heading path), where it
came from, and the full passage text with the cited span in bold, so the exported file stands on
its own without the corpus.
"""

from __future__ import annotations

from ..reasoning.result import (
    DECISION_COMPLETED, DECISION_CORRECTED, DECISION_NO_ANSWER, DECISION_NOT_CONFIRMED, DECISION_PASS,
    AnswerResult, Reference, honest_decision,
)
from .records import (ROLE_USER, STATE_CANCELLED, STATE_FAILED, STATE_STREAMING, Conversation,
                      Message)

# How each step of the reasoning path was checked (runs stored before #23 are judged again).
_FATES = {
    DECISION_PASS: "verified",
    DECISION_NOT_CONFIRMED: "not confirmed",
    DECISION_NO_ANSWER: "no answer in passage",
    DECISION_CORRECTED: "corrected by IR",
    DECISION_COMPLETED: "completed by IR",
}

_STATE_NOTES = {
    STATE_STREAMING: "*(this answer was interrupted before it finished)*",
    STATE_CANCELLED: "*(stopped before it finished)*",
}


def conversation_markdown(conversation: Conversation) -> str:
    lines = [f"# {conversation.title}", "",
             f"*Started {conversation.created_at}, last updated {conversation.updated_at}, "
             f"{conversation.message_count} messages.*", ""]
    for message in conversation.messages:
        lines.extend(_message_lines(message))
    return "\n".join(lines).rstrip() + "\n"


def answer_markdown(result: AnswerResult) -> str:
    """One answer with its references, as the app copies it to the clipboard."""
    lines = []
    if result.standalone_question:
        lines += [f"*Answered as: {result.standalone_question}*", ""]
    lines += [result.final_content or "*(no text)*", ""]
    if result.references:
        lines += ["References:", ""]
        for ref in result.references:
            lines.extend(_reference_lines(ref))
    if result.path:
        lines += ["Reasoning path:", "", *_path_lines(result), ""]
    return "\n".join(lines).rstrip() + "\n"


def _path_lines(result: AnswerResult) -> list[str]:
    """One line per step of the final path with how IR checked it."""
    lines = []
    for n, node in enumerate(result.path, start=1):
        decision = honest_decision(node)
        fate = _FATES.get(decision, decision.replace("_", " "))
        lines.append(f"{n}. {node.query} — {node.answer or '?'} *({fate})*")
    return lines


def _message_lines(message: Message) -> list[str]:
    if message.role == ROLE_USER:
        return ["## Question", "", message.content, ""]
    lines = ["## Answer", ""]
    if message.result is not None and message.result.standalone_question:
        lines += [f"*Answered as: {message.result.standalone_question}*", ""]
    lines += [message.content or "*(no text)*", ""]
    if message.state == STATE_FAILED:
        lines += [f"*(failed: {message.error or 'unknown error'})*", ""]
    elif message.state in _STATE_NOTES:
        lines += [_STATE_NOTES[message.state], ""]
    if message.run is not None:
        run = message.run
        lines += [f"*Mode {run.mode or '?'}, model {run.model or '?'}, corpus {run.corpus or '?'}, "
                  f"reader {run.reader or '?'}.*", ""]
    if message.result is not None and message.result.references:
        lines += ["### References", ""]
        for ref in message.result.references:
            lines.extend(_reference_lines(ref))
    if message.result is not None and message.result.path:
        lines += ["### Reasoning path", "", *_path_lines(message.result), ""]
    return lines


def _reference_lines(ref: Reference) -> list[str]:
    p = ref.passage
    origin = f"corpus `{p.corpus}`, passage `{p.pid}`"
    if p.source:
        origin += f", from {p.source}"
    where = f", {p.location()}" if p.location() else ""  # ", report.pdf, p. 12 - 3.2 Results"
    return [f"[{ref.mark}] **{p.title}**{where} ({origin})", "", *_quoted(_with_span(ref)), ""]


def _with_span(ref: Reference) -> str:
    text = ref.passage.text
    if ref.span is None:
        return text
    start, end = ref.span
    if not (0 <= start < end <= len(text)):
        return text  # an odd span must not garble the passage
    return f"{text[:start]}**{text[start:end]}**{text[end:]}"


def _quoted(text: str) -> list[str]:
    return [f"> {line}" if line else ">" for line in text.splitlines() or [""]]
