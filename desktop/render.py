"""Pure text-to-HTML helpers for the app's views (no Qt, so they are trivially testable).

Everything that comes from a passage, the model or the user is escaped with ``html.escape``
before any markup is added: a passage that contains ``<b>`` shows the characters ``<b>``.
"""

from __future__ import annotations

import html
import re
import time
from datetime import date, datetime
from typing import Iterable

from searchain import units
from searchain.events import Progress
from searchain.reasoning import (
    DECISION_COMPLETED,
    DECISION_CORRECTED,
    DECISION_DUPLICATE,
    DECISION_NO_ANSWER,
    DECISION_NOT_CONFIRMED,
    DECISION_NOT_READ,
    DECISION_PASS,
    DECISION_UNCHECKED,
    Node,
    Reference,
    honest_decision,
)
from searchain.reasoning import (  # the GenGround and GEEK fates
    DECISION_EMPTY,
    DECISION_EXTRACTED,
    DECISION_GROUNDED,
    DECISION_SELF_ANSWERED,
    DECISION_UNGROUNDED,
)

from .colours import LIGHT, Colours

# [3] or [3][4] or [3, 4]: the marks the engine writes into final content.
_MARK = re.compile(r"\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]")
REF_SCHEME = "ref"
DOC_SCHEME = "doc"

# Badge text per IR decision (the fate of a node); its colour comes from ``colours``.
BADGES: dict[str, str] = {
    DECISION_PASS: "verified",
    DECISION_NOT_CONFIRMED: "not confirmed",
    DECISION_NO_ANSWER: "no answer in passage",
    DECISION_NOT_READ: "yes/no: not read",
    DECISION_CORRECTED: "corrected by IR",
    DECISION_COMPLETED: "completed by IR",
    DECISION_DUPLICATE: "skipped: duplicate",
    DECISION_UNCHECKED: "unchecked",
    DECISION_GROUNDED: "grounded",
    DECISION_EMPTY: "batch: empty",
    DECISION_UNGROUNDED: "not grounded",
    DECISION_EXTRACTED: "extracted",
    DECISION_SELF_ANSWERED: "self-answered",
}

# What each fate means, for the badge's tooltip (SearChain's IR step, SEARCHAIN.md).
BADGE_EXPLANATIONS: dict[str, str] = {
    DECISION_PASS: "Checked against the top passage: the reader found an answer there that agrees with "
                   "the LLM's, and the passage says what the LLM's answer says.",
    DECISION_NOT_CONFIRMED: "Checked against the top passage, but it does not back the LLM's answer: the "
                            "reader found a different answer (not confident enough, below θ, to correct "
                            "it) or the passage lacks the answer's words. The LLM's answer stands, unconfirmed.",
    DECISION_NO_ANSWER: "The reader found no answer to this step in the top passage, so nothing confirms "
                        "the LLM's answer; it stands unchecked.",
    DECISION_NOT_READ: "A yes/no step: the reader copies an answer out of a passage and cannot answer yes "
                       "or no, so the top passage was retrieved (shown here) but not read. The LLM's "
                       "answer stands unchecked.",
    DECISION_CORRECTED: "The reader found a different answer in the top passage with confidence above θ; "
                        "the LLM was shown it and rewrote its chain from this step.",
    DECISION_COMPLETED: "The LLM could not answer this step (an unsolved query); the answer was taken "
                        "from the top passage.",
    DECISION_DUPLICATE: "The same query as an earlier step (by embedding similarity), so it was not "
                        "checked again.",
    DECISION_UNCHECKED: "Not checked against the corpus: the chain ended before it, or this answering "
                        "mode does not verify steps.",
    DECISION_GROUNDED: "GenGround: the model quoted evidence from this batch of passages and revised its answer "
                       "to match it.",
    DECISION_EMPTY: "GenGround: nothing in this batch of passages bore on the step (\"Empty\"); the next "
                    "batch was tried.",
    DECISION_UNGROUNDED: "No passage could back this step, so the model's own answer stands, unverified.",
    DECISION_EXTRACTED: "GEEK: the fact was extracted from the retrieved passages (Retrieve & Extract).",
    DECISION_SELF_ANSWERED: "GEEK: answered by reasoning over the facts found so far, without retrieval.",
}
COLUMN_TIPS = {
    "LLM answer": "What the language model answered for this step",
    "Reader answer": "The answer the reader found in the top passage for this step's query",
    "Confidence": "The reader's confidence in its answer, compared with θ (Settings)",
    "Fate": "What the IR check did with this step; point at a badge for details",
}


def escape(text: str | None) -> str:
    return html.escape(text or "", quote=True)


def plain_tooltip(text: str | None) -> str:
    """``text`` as a tooltip that shows exactly its characters, line breaks kept.

    Qt renders a tooltip as rich text when its first line looks like a tag
    (``Qt.mightBeRichText``): a conversation titled ``<img src=x>`` would show an image. So the
    text always goes in as rich text, escaped, in a paragraph that keeps its white space.
    """
    if not text:
        return ""
    return f"<p style='white-space:pre-wrap'>{html.escape(text, quote=False)}</p>"


def ref_url(message_key: str | int, mark: int) -> str:
    """The anchor target for mark ``[mark]`` of the answer ``message_key`` (marks restart per answer)."""
    return f"{REF_SCHEME}:{message_key}:{mark}"


def parse_ref_url(url: str) -> tuple[str, int] | None:
    """``"ref:7:2"`` -> ``("7", 2)``; anything else -> None."""
    parts = url.split(":")
    if len(parts) != 3 or parts[0] != REF_SCHEME or not parts[2].isdigit():
        return None
    return parts[1], int(parts[2])


def text_to_html(text: str) -> str:
    """Escaped text with line breaks kept."""
    return escape(text).replace("\n", "<br>")


def answer_html(final_content: str, message_key: str | int, marks: Iterable[int] | None = None) -> str:
    """Escaped answer text whose ``[n]`` marks are links to ``ref:<message_key>:<n>``.

    ``marks`` limits links to marks that resolve to a reference; other bracketed numbers stay text.
    """
    allowed = set(marks) if marks is not None else None
    escaped = text_to_html(final_content)

    def link(match: re.Match[str]) -> str:
        numbers = [int(n) for n in re.split(r"\s*,\s*", match.group(1))]
        if allowed is not None and not all(n in allowed for n in numbers):
            return match.group(0)
        return "".join(f'<a href="{ref_url(message_key, n)}">[{n}]</a>' for n in numbers)

    return _MARK.sub(link, escaped)


def references_html(references: list[Reference], message_key: str | int,
                    colours: Colours = LIGHT) -> str:
    """The list of sources under an answer: ``[n] Title (corpus) — the supporting span``."""
    if not references:
        return ""
    rows = []
    for ref in sorted(references, key=lambda r: r.mark):
        span = ref.span_text or ref.answer
        rows.append(
            f'<div class="ref"><a href="{ref_url(message_key, ref.mark)}">[{ref.mark}]</a> '
            f"<b>{escape(ref.passage.title)}</b> "
            f'<span style="color:{colours.faint}">({escape(ref.passage.corpus)})</span> &mdash; '
            f"{escape(_shorten(span, 160))}</div>"
        )
    return '<div style="margin-top:6px;font-size:small">' + "".join(rows) + "</div>"


def passage_html(text: str, span: tuple[int, int] | None, colours: Colours = LIGHT) -> str:
    """The passage text, escaped, with ``text[span]`` highlighted (a bad span is ignored)."""
    if span is None or not (0 <= span[0] < span[1] <= len(text)):
        return text_to_html(text)
    start, end = span
    return (
        text_to_html(text[:start])
        + f'<span style="background-color:{colours.highlight_background};'
        f'color:{colours.highlight_text}"><b>'
        + text_to_html(text[start:end])
        + "</b></span>"
        + text_to_html(text[end:])
    )


def badge(decision: str, colours: Colours = LIGHT) -> tuple[str, str]:
    """(label, colour) of the badge for an IR decision."""
    return BADGES.get(decision, decision), colours.badge(decision)


def format_confidence(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def node_summary(node: Node) -> str:
    """One line for tooltips and tests: query, answers and fate of a node."""
    llm = "[unsolved]" if node.unsolved else (node.llm_answer or "")
    parts = [f"Q: {node.query}", f"LLM: {llm}"]
    if node.reader_answer is not None:
        parts.append(f"IR: {node.reader_answer} ({format_confidence(node.confidence)})")
    parts.append(badge(honest_decision(node))[0])
    return " | ".join(parts)


def date_group(when: float | datetime | str, today: date | None = None) -> str:
    """The sidebar group of a conversation last updated at ``when`` (epoch seconds, datetime or ISO)."""
    moment = _to_datetime(when)
    today = today or date.today()
    days = (today - moment.date()).days
    if days <= 0:
        return "Today"
    if days == 1:
        return "Yesterday"
    if days < 7:
        return "Previous 7 days"
    if days < 30:
        return "Previous 30 days"
    return moment.strftime("%B %Y")


def _to_datetime(when: float | datetime | str) -> datetime:
    if isinstance(when, datetime):
        return when.astimezone() if when.tzinfo else when
    if isinstance(when, (int, float)):
        return datetime.fromtimestamp(when)
    try:
        parsed = datetime.fromisoformat(str(when))
    except ValueError:
        return datetime.now()
    return parsed.astimezone() if parsed.tzinfo else parsed


def format_bytes(size: int | float | None) -> str:
    return units.size(size, unknown="—")


def format_duration(seconds: float | None) -> str:
    if seconds is None or seconds != seconds or seconds < 0:
        return "estimating…"
    return units.duration(seconds)


def eta_seconds(done: int, total: int | None, started_at: float, now: float | None = None) -> float | None:
    """Time left from the rate so far; None until there is a rate to go on."""
    if not total or done <= 0:
        return None
    elapsed = (time.monotonic() if now is None else now) - started_at
    if elapsed <= 0:
        return None
    return max(0.0, elapsed / done * (total - done))


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


APP_INDEX_FIX = "In the app: Corpus › Manage corpora…, select the corpus, then Update › Update index."


def describe_error(exc: BaseException) -> tuple[str, str]:
    """(message, hint) a user can read for any exception a job raised; never a traceback."""
    from searchain.errors import IndexError_, SearchainError

    if isinstance(exc, IndexError_) and "searchain corpus index" in (exc.hint or ""):
        # The engine's hints name the CLI command; say where the same fix is in the app.
        return exc.message, f"{exc.hint}\n{APP_INDEX_FIX}"
    if isinstance(exc, SearchainError):
        return exc.message, exc.hint or ""
    if isinstance(exc, MemoryError):
        return "Ran out of memory.", "Try a smaller model or a smaller context size (Settings > Model and reasoning)."
    if isinstance(exc, OSError):
        return f"A file operation failed: {exc}", "Check the path exists and that you may read or write it."
    name = type(exc).__name__
    return (
        f"Something went wrong inside the engine ({name}: {exc}).",
        "The app is still usable. The full details are in the log (Help > Open log folder); "
        "Help > Check set-up looks for a cause and makes a report to send.",
    )

def progress_line(event: Progress) -> str:
    """A slow first step (opening a large index, finishing a keyword index) as the chat's phase
    line: "Finishing the keyword index …: 1,234 passages, about 2 s… 40 %"."""
    line = event.message[:1].upper() + event.message[1:] + "…"
    if event.total and event.done:
        line += f" {min(event.done / event.total, 1.0):.0%}"
    return line

