"""Keep the prompt's few-shot examples out of the answers.

Small models copy from the examples: a year, a title or a person of an example comes back as the
answer to an unrelated question, or a whole example query is asked again (and retrieval then
finds a passage about the example). ``ExampleGuard`` knows the queries and answers of the
examples the model was shown and takes them out of a parsed chain before IR sees it:

- a step whose query is an example's query (and the question is not that example's) is dropped;
- an answer that is an example's answer, and that the question itself does not mention, is no
  answer: the step becomes an [Unsolved Query], so IR answers it from the corpus instead;
- a [Final Content] whose short answer is an example's answer is dropped.

"Yes" and "No" are never treated as copies: they are the only answers a yes/no question has.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ...metrics import normalize_answer
from .parser import ParsedChain, parse_chain, short_answer

_NEVER_COPIES = frozenset({"yes", "no", ""})
_HEDGE = re.compile(r"^(?:about|around|approximately|roughly|some)\s+")


@dataclass(frozen=True)
class ExampleGuard:
    questions: frozenset[str]
    queries: frozenset[str]
    answers: frozenset[str]

    @classmethod
    def from_template(cls, template: str) -> "ExampleGuard":
        """Read the examples (blocks that start with ``[Question]:``) of a CoQ template."""
        questions, queries, answers = set(), set(), set()
        for block in re.split(r"(?=\[Question\]\s*:)", template):
            head = re.match(r"\[Question\]\s*:(.*)", block)
            if head is None:
                continue
            questions.add(normalize_answer(head.group(1)))
            chain = parse_chain(block)
            given = [step.answer for step in chain.steps if step.answer]
            if chain.final_content:
                given.append(short_answer(chain.final_content))
            for step in chain.steps:
                queries.add(normalize_answer(step.query))
            for answer in given:
                norm = normalize_answer(answer)
                answers.update((norm, _HEDGE.sub("", norm)))  # "about 346 km" is copied as "346 km" too
        return cls(frozenset(questions), frozenset(queries), frozenset(answers - _NEVER_COPIES))

    def is_copied_answer(self, answer: str | None, question: str) -> bool:
        """Whether ``answer`` contains an example's answer that ``question`` does not mention
        ("So it is Jupiter" copies "Jupiter"; a question about Jupiter may answer Jupiter)."""
        norm, asked = f" {normalize_answer(answer or '')} ", f" {normalize_answer(question)} "
        return any(f" {a} " in norm and f" {a} " not in asked for a in self.answers)

    def clean(self, chain: ParsedChain, question: str) -> ParsedChain:
        """``chain`` without the example queries and answers the model copied."""
        if normalize_answer(question) in self.questions:
            return chain  # the user asked an example's own question: its answers are fair
        steps = []
        for step in chain.steps:
            if normalize_answer(step.query) in self.queries:
                continue
            if step.answer is not None and self.is_copied_answer(step.answer, question):
                step = replace(step, answer=None, unsolved=True)
            steps.append(step)
        final = chain.final_content
        if final and self.is_copied_answer(short_answer(final), question):
            final = None
        return ParsedChain(steps=steps, final_content=final)
