"""Baselines for comparison: "direct answer" and "retrieve-then-read".

- direct: the LLM answers from its own knowledge; no references.
- rag: the top-k passages go into the prompt; the model cites them as ``[n]`` and each valid mark
  resolves to its passage (span: where the short answer occurs in it, if it does).
"""

from __future__ import annotations

from typing import Any

from ..events import check
from ..types import Passage
from .chain.parser import rewrite_marks, short_answer, strip_marks
from .chain.prompts import PromptBook
from .parts import Generator, locate
from .result import Reference

RAG_MIN_PASSAGES = 3  # retrieve-then-read needs more than the loop's top-1 to be a fair baseline


def answer_direct(question: str, *, generator: Generator, prompts: PromptBook) -> tuple[str, list[Reference]]:
    completion = generator.chat([{"role": "user", "content": prompts.direct(question)}], "chain", None)
    return strip_marks(completion.text.strip()), []


def answer_rag(question: str, *, generator: Generator, prompts: PromptBook, retriever: Any,
               top_k: int) -> tuple[str, list[Reference]]:
    hits = retriever.search(question, k=max(top_k, RAG_MIN_PASSAGES))
    check(generator.cancel)
    passages = [h.passage for h in hits]
    completion = generator.chat([{"role": "user", "content": prompts.rag(question, passages)}], "chain", None)
    return resolve_passage_marks(completion.text.strip(), passages, question)


def resolve_passage_marks(text: str, passages: list[Passage], question: str) -> tuple[str, list[Reference]]:
    """Keep marks that name a passage given to the model; drop the rest; build references."""
    answer = short_answer(text)
    text, cited = rewrite_marks(text, lambda n: n if 1 <= n <= len(passages) else None)
    content = " ".join(text.split())
    refs = [
        Reference(mark=n, passage=passages[n - 1], span=locate(answer, passages[n - 1].text),
                  query=question, answer=answer)
        for n in cited
    ]
    return content, refs
