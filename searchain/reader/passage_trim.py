"""The sentences of a passage that can hold the answer to a question (a shorter reader prompt).

The LLM reader reads one passage per call; most of its prompt is the passage. ``trim_passage``
keeps the ``keep`` sentences sharing the most content words with the question (ties: the
earlier), in the passage's order, joined by a space: every kept sentence is a verbatim piece of
the passage, so an answer copied from it is found in the whole passage too. A passage of no more
than ``keep`` sentences comes back unchanged.
"""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_WORD = re.compile(r"[A-Za-z0-9]+")
_STOP = frozenset("""a an the of in on at to for from by with and or but is are was were be been
who whom whose what which when where why how that this these those it its as did does do
has have had his her their there than then into about after before""".split())


def sentences(text: str) -> list[str]:
    """``text`` cut after ., ! or ? followed by a capital or digit ("J. R. R." stays whole only
    when an initial is followed by another initial: good enough to choose what to read)."""
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def _content(text: str) -> set[str]:
    return {w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if w not in _STOP and len(w) > 1}


def trim_passage(question: str, text: str, keep: int) -> str:
    """The ``keep`` sentences of ``text`` most like ``question`` (see the module docstring)."""
    parts = sentences(text)
    if keep <= 0 or len(parts) <= keep:
        return text
    asked = _content(question)
    ranked = sorted(range(len(parts)), key=lambda i: (-len(asked & _content(parts[i])), i))
    return " ".join(parts[i] for i in sorted(ranked[:keep]))
