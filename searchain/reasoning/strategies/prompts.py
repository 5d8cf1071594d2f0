"""Prompts of the GenGround and GEEK strategies (wording in ``resources/prompts/genground_*.txt``
and ``geek_*.txt``, our own words; the markers are the contract with ``parse.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ...config import resources_dir
from ...errors import ConfigError
from ...types import Passage
from ..chain.prompts import PASSAGE_PROMPT_CHARS, fill

_TEMPLATES = (
    "genground_deduce", "genground_ground", "geek_action_next", "geek_action_pending", "geek_decomp",
    "geek_extract", "geek_self", "geek_final",
)


def format_steps(steps: Sequence[tuple[str, str]], answer_marker: str = "Answer") -> str:
    """The (sub-question, answer) pairs so far, in the markers the prompts use."""
    return "\n".join(f"[Sub-question]: {q}\n[{answer_marker}]: {a}" for q, a in steps)


def format_passages(passages: Sequence[Passage], chars: int = PASSAGE_PROMPT_CHARS) -> str:
    blocks = []
    for n, p in enumerate(passages, start=1):
        text = " ".join(p.text.split())
        if len(text) > chars:
            text = text[:chars].rstrip() + " ..."
        blocks.append(f"[Document {n}] {p.title}: {text}")
    return "\n".join(blocks)


class StrategyPrompts:
    """The strategies' templates, read once from a folder (default ``resources/prompts``)."""

    def __init__(self, folder: Path | None = None):
        self.folder = Path(folder) if folder else resources_dir() / "prompts"
        self.templates: dict[str, str] = {}
        for name in _TEMPLATES:
            path = self.folder / f"{name}.txt"
            try:
                self.templates[name] = path.read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ConfigError(f"Prompt template {path} cannot be read: {exc}",
                                  hint="Reinstall SearChain, or restore the file from resources/prompts/.") from exc

    def _fill(self, name: str, **values: str) -> str:
        return fill(self.templates[name], **values).strip()

    # -- GenGround ----------------------------------------------------------------------------
    def deduce(self, question: str, steps: Sequence[tuple[str, str]], *, yes_no: bool = False) -> str:
        return self._fill("genground_deduce", question=question.strip(), steps=format_steps(steps),
                          yes_no=", yes or no" if yes_no else "")

    def ground(self, sub_question: str, answer: str, passages: Sequence[Passage]) -> str:
        return self._fill("genground_ground", sub_question=sub_question, answer=answer,
                          passages=format_passages(passages))

    # -- GEEK ---------------------------------------------------------------------------------
    def action_next(self, question: str, steps: Sequence[tuple[str, str]]) -> str:
        return self._fill("geek_action_next", question=question.strip(), steps=format_steps(steps, "Fact"))

    def action_pending(self, question: str, steps: Sequence[tuple[str, str]], sub_question: str) -> str:
        return self._fill("geek_action_pending", question=question.strip(),
                          steps=format_steps(steps, "Fact"), sub_question=sub_question)

    def decomp(self, question: str, steps: Sequence[tuple[str, str]], options: int) -> str:
        return self._fill("geek_decomp", question=question.strip(), steps=format_steps(steps, "Fact"),
                          options=str(options))

    def extract(self, sub_question: str, pseudo_answer: str, passages: Sequence[Passage]) -> str:
        return self._fill("geek_extract", sub_question=sub_question, pseudo_answer=pseudo_answer or "-",
                          passages=format_passages(passages))

    def self_answer(self, question: str, steps: Sequence[tuple[str, str]], sub_question: str) -> str:
        return self._fill("geek_self", question=question.strip(), steps=format_steps(steps, "Fact"),
                          sub_question=sub_question)

    def final(self, question: str, steps: Sequence[tuple[str, str]], *, yes_no: bool) -> str:
        return self._fill("geek_final", question=question.strip(), steps=format_steps(steps, "Fact"),
                          yes_no=" yes or no." if yes_no else "")
