"""What the GenGround and GEEK runs share: the question, the engine's parts (generator, retriever,
duplicate detector), the strategy prompts and settings, the yes/no form and the field caps, and
the outcome they return."""

from __future__ import annotations

from dataclasses import dataclass

from ...config import ReasoningSettings
from ..duplicates import DuplicateDetector
from ..parts import Generator, LoopOutcome, Retriever
from .prompts import StrategyPrompts


@dataclass
class StrategyOutcome(LoopOutcome):
    final_answer: str = ""  # the model's short final answer (the final content is built from it)


class StrategyRun:
    """One question answered by a strategy; subclasses implement ``run``."""

    def __init__(self, question: str, *, generator: Generator, prompts: StrategyPrompts,
                 settings: ReasoningSettings, retriever: Retriever, detector: DuplicateDetector | None,
                 yes_no: bool, field_chars: int | None):
        self.question = question
        self.gen = generator
        self.prompts = prompts
        self.settings = settings
        self.retriever = retriever
        self.detector = detector
        # A yes/no question (HotpotQA's comparisons, StrategyQA): the final answer is yes or no.
        self.yes_no = yes_no
        # One cap for every free-text field (None: each grammar's own default), for small contexts.
        self.caps = {} if field_chars is None else {"chars": field_chars}

    def run(self) -> StrategyOutcome:
        raise NotImplementedError
