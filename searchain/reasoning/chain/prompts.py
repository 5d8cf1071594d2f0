"""Prompt builders: the Chain-of-Query round, the two feedback prompts, tracing and the baselines.

The wording lives in ``resources/prompts/*.txt`` (our own words, the paper's markers) so that it
can be tuned without touching code. Templates use ``{name}`` placeholders, filled in one pass so
that braces inside a user's question are never mistaken for placeholders.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

from ...config import resources_dir
from ...errors import ConfigError
from ...types import Passage

# Task variants of the CoQ prompt (paper: multi-hop/slot-filling, yes/no, long-form).
TASK_MULTIHOP = "multihop"
TASK_YESNO = "yesno"
TASK_LONGFORM = "longform"
TASKS = (TASK_MULTIHOP, TASK_YESNO, TASK_LONGFORM)

_TEMPLATES = (
    "coq_instructions", "coq_multihop", "coq_yesno", "coq_longform", "coq_question",
    "feedback_correction", "feedback_completion", "tracing", "direct", "rag", "followup",
    "format_reminder",
)
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_YESNO_START = re.compile(
    r"^(is|are|was|were|do|does|did|can|could|would|should|will|has|have|had|may|might|must)\b",
    re.IGNORECASE,
)
_LONGFORM_START = re.compile(r"^(why|explain|describe|how (?!many|much|old|long|far|tall|big))\b", re.IGNORECASE)

# Passages are cut to this many characters inside prompts (a ~100-word passage fits whole).
PASSAGE_PROMPT_CHARS = 1200


def detect_task(question: str) -> str:
    """Guess the CoQ variant from the question's first word (yes/no, long-form, else multi-hop)."""
    q = question.strip().lstrip("\"'“")
    if _YESNO_START.match(q):
        return TASK_YESNO
    if _LONGFORM_START.match(q):
        return TASK_LONGFORM
    return TASK_MULTIHOP


def fill(template: str, **values: str) -> str:
    """Replace each ``{name}`` in ``template`` (only there) by ``values[name]``."""
    return _PLACEHOLDER.sub(lambda m: str(values.get(m.group(1), m.group(0))), template)


class PromptBook:
    """The prompt templates, read once: ``NAME.txt`` from ``folder`` where it has one, else the
    built-in ``resources/prompts/NAME.txt`` (so a user's folder may replace a single template)."""

    def __init__(self, folder: Path | str | None = None):
        builtin = resources_dir() / "prompts"
        self.folder = Path(folder).expanduser() if folder else builtin
        if not self.folder.is_dir():
            raise ConfigError(
                f"The prompt folder {self.folder} does not exist.",
                hint="Set reasoning.prompts_folder to a folder of NAME.txt templates, or leave it empty for the built-in ones.",
            )
        self.templates: dict[str, str] = {}
        for name in _TEMPLATES:
            own = self.folder / f"{name}.txt"
            path = own if own.exists() else builtin / f"{name}.txt"
            try:
                text = path.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError(
                    f"Prompt template {path} cannot be read: {exc}",
                    hint="Fix or remove the file; the built-in ones are in resources/prompts/.",
                ) from exc
            if not text:
                raise ConfigError(f"Prompt template {path} is empty.",
                                  hint="Write the template, or remove the file to use the built-in one.")
            self.templates[name] = text

    def coq(self, question: str, task: str) -> str:
        """The first-round CoQ prompt for ``task`` (multihop | yesno | longform)."""
        if task not in TASKS:
            raise ConfigError(f"Unknown task variant {task!r}.", hint=f"Use one of: {', '.join(TASKS)}.")
        t = self.templates
        return "\n\n".join(
            (t["coq_instructions"], t[f"coq_{task}"], fill(t["coq_question"], question=question.strip()))
        )

    def example_guard(self, task: str):
        """What the ``task`` prompt's few-shot examples say, to keep it out of the answers."""
        from .examples import ExampleGuard

        if task not in TASKS:
            raise ConfigError(f"Unknown task variant {task!r}.", hint=f"Use one of: {', '.join(TASKS)}.")
        return ExampleGuard.from_template(self.templates[f"coq_{task}"])

    def feedback(self, kind: str, *, question: str, query: str, answer: str, passage: Passage,
                 settled: Sequence[tuple[str, str]] = (), span: tuple[int, int] | None = None,
                 chars: int = PASSAGE_PROMPT_CHARS) -> str:
        """The correction or completion feedback (``kind``) about one node.

        ``settled``: the (query, answer) steps already checked, this node's with IR's answer;
        they are listed so that the next chain builds on them and asks the next step instead.
        The reference is the passage cut to ``chars`` characters, around the answer's ``span``
        when the reader gave one (every character is a prompt token the next round evaluates).
        """
        steps = settled or [(query, answer)]
        if chars >= PASSAGE_PROMPT_CHARS:
            reference = _cut(passage.text)
        else:
            reference = evidence_excerpt("", passage.text, span, chars)[2:]  # without the empty title's ": "
        return fill(
            self.templates[f"feedback_{kind}"],
            question=question.strip(),
            query=query,
            answer=answer,
            title=passage.title,
            passage=reference,
            settled="\n".join(f"[Query {n}]: {q}\n[Answer {n}]: {a}" for n, (q, a) in enumerate(steps, start=1)),
        )

    def format_reminder(self, question: str) -> str:
        """Sent after a chain with no readable [Query]/[Answer] step: the format, once more."""
        return fill(self.templates["format_reminder"], question=question.strip())

    def tracing(self, question: str, pairs: Sequence[tuple[str, str]],
                evidence: Sequence[str] = (), passages: Sequence[str] = ()) -> str:
        """The tracing prompt over the correct path's (query, answer) pairs, numbered from 1, each
        followed by its passage excerpt (``evidence``, same order; "" for a node without one).

        With the excerpts the model writing the final answer reads what RAG's reader reads, not
        only the pairs: a small model's step answer may be a name the passage says more about.
        ``passages`` (excerpts retrieved for the question itself) follow, numbered after the pairs,
        so that the final answer can cite them too."""
        lines = []
        for n, (query, answer) in enumerate(pairs, start=1):
            lines.append(f"[Query {n}]: {query}\n[Answer {n}]: {answer}")
            excerpt = evidence[n - 1] if n - 1 < len(evidence) else ""
            if excerpt:
                lines.append(f"[Evidence {n}]: {excerpt}")
        if passages:
            lines.append("Passages found for the [Question] itself (cite them by their number too):")
            lines += [f"[Passage {n}]: {text}" for n, text in enumerate(passages, start=len(pairs) + 1)]
        return fill(self.templates["tracing"], question=question.strip(), pairs="\n".join(lines))

    def followup(self, question: str, turns: str) -> str:
        """The rewrite prompt: earlier turns (already formatted), then the new question."""
        return fill(self.templates["followup"], question=" ".join(question.split()), turns=turns)

    def direct(self, question: str) -> str:
        return fill(self.templates["direct"], question=question.strip())

    def rag(self, question: str, passages: Sequence[Passage],
            steps: Sequence[tuple[str, str, int]] = ()) -> str:
        """Plain RAG's prompt; ``steps`` (query, answer, passage number) are listed after the
        passages, so the prompt begins as the one without them (its KV state is reused)."""
        blocks = [f"[{n}] {p.title}: {_cut(p.text)}" for n, p in enumerate(passages, start=1)]
        if steps:
            blocks.append("\nSteps already checked against these passages:")
            blocks += [f"- {' '.join(q.split())} {' '.join(a.split())} [{n}]" for q, a, n in steps]
        return fill(self.templates["rag"], question=question.strip(), passages="\n".join(blocks))


EVIDENCE_CHARS = 320  # an excerpt per step in the tracing prompt: the answer's sentence and around


def evidence_excerpt(title: str, text: str, span: tuple[int, int] | None, chars: int = EVIDENCE_CHARS) -> str:
    """``title: text`` cut to about ``chars`` characters around ``span`` (the answer's place in the
    passage), else from its start; cut ends are marked "..."."""
    text = " ".join(text.split()) if span is None else text
    if len(text) <= chars:
        body = text
    else:
        centre = (span[0] + span[1]) // 2 if span else chars // 2
        start = max(0, min(centre - chars // 2, len(text) - chars))
        body = ("... " if start else "") + text[start:start + chars].strip() + (" ..." if start + chars < len(text) else "")
    return f"{title}: {' '.join(body.split())}"


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= PASSAGE_PROMPT_CHARS else text[:PASSAGE_PROMPT_CHARS].rstrip() + " ..."
