"""The answer alone: a stated answer that is a sentence, cut to the words that answer.

Small models close with a sentence where a name is asked: "So the final answer is Kate Millett
attended Oxford University." The final content keeps that sentence (the user reads it, with its
marks); the short answer, which the references highlight in their passages and the eval scores,
should be "Oxford". On HotpotQA 10 of SearChain's 35 right answers scored F1 below 0.5 that way
(BENCHMARKS.md, #37).

The cut is the LLM reader's own prompt and grammar (``reader.llm_reader``) over the stated sentence
as its passage: the model can only copy a span of what it already said, chosen with the question
in view ("When did the newspaper change its name?" takes the year, not the newspaper). Only an
answer stated after "the answer is" (or GenGround's and GEEK's ``[Final Answer]`` field) is cut,
and only a sentence: ``CONCISE_MIN_WORDS`` words or more, one of them a lowercase content word
(a verb, a common noun). "The City of Newcastle" is a name and stays; a text that reasons
without stating an answer has no sentence to cut, and a reply the model rambled in is better
left whole than guessed from. A sentence that names both options of a choice ("Terry Richardson
is older than Annie Morton") is left whole too: which option answers lies in the comparison's
words, and the model copied the wrong name there. Measured on 70 HotpotQA questions outside the
100 of the goal (BENCHMARKS.md, Lever 8): cut at 4+ words regardless, cover-EM fell (names were
cut short); with the lowercase rule, cover-EM the same and F1 up. One short model call (~40-70
prompt tokens after the reader's cached opening), counted under the ``answer`` phase.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Sequence

from ..reader.llm_reader import LLMReader, clean_reply, locate_span
from ..reader.span_extract import FUNCTION_WORDS
from .accounting import MeteredLLM
from .chain.parser import answer_tail, short_answer
from .parts import locate
from .result import Reference

PHASE_CONCISE = "answer"
_OR = re.compile(r"\s*,?\s+or\s+|\s*,\s*", re.IGNORECASE)
CONCISE_MIN_WORDS = 4  # "Toronto Coach Terminal" stands; "Kate Millett attended Oxford" is cut


def question_options(question: str) -> list[str]:
    """The options a choice question offers after its first comma: "Who is older, Annie Morton
    or Terry Richardson?" gives ["Annie Morton", "Terry Richardson"]; [] for other questions."""
    tail = question.strip().rstrip("?").split(",", 1)
    if len(tail) < 2 or " or " not in tail[1]:
        return []
    return [o.strip(" \"'“”") for o in _OR.split(tail[1]) if o.strip(" \"'“”")]


def names_both_options(question: str, stated: str) -> bool:
    """Whether ``stated`` names two or more of the question's options ("Terry Richardson is
    older than Annie Morton"): which one answers lies in the comparison's words, which a copied
    span cannot weigh (Qwen2.5-1.5B copied "Annie Morton" there), so such a sentence is left whole."""
    said = stated.lower()
    return sum(option.lower() in said for option in question_options(question)) >= 2


def is_sentence(answer: str) -> bool:
    """``CONCISE_MIN_WORDS`` words or more, one a lowercase content word (a verb, a common noun):
    "Kate Millett attended Oxford University", not the name "The City of Newcastle"."""
    words = answer.split()
    return len(words) >= CONCISE_MIN_WORDS and any(w[:1].islower() and not _function_word(w) for w in words)


def _function_word(word: str) -> bool:
    return word.strip(".,;:\"'").lower() in FUNCTION_WORDS


def stated_sentence(final_content: str) -> str | None:
    """The answer stated after the last "answer is", when it is a sentence to cut; else None."""
    tail = answer_tail(final_content)
    if tail is None or not tail.strip(" .:"):
        return None  # no answer stated ("So the final answer is."): nothing to cut
    stated = short_answer(final_content)
    return stated if is_sentence(stated) else None


def concise_answer(question: str, stated: str, llm: Any, sink: Any) -> str | None:
    """The words of ``stated`` (see ``stated_sentence``) that answer ``question``, a span of it;
    None when the model finds none or keeps the whole. ``sink`` (the run's ``Generator``) counts
    the call.

    The reply is taken as the span it copies, not through the reader's rule that an answer must
    say something the question does not: that rule guards a passage's reading against echoes of
    the question, but a comparison's answer is one of the question's own options ("Who is older,
    Annie Morton or Terry Richardson?": "Terry Richardson")."""
    reader = LLMReader(MeteredLLM(llm, sink, PHASE_CONCISE))
    completion = reader.llm.chat(reader.messages(question, "Answer", stated), reader.params(stated))
    reply = clean_reply(completion.text)
    where = locate_span(reply, stated) if reply else None
    if where is None:
        return None
    span = stated[where[0]:where[1]].strip(" ,;:.")
    if not span or span == stated or all(_function_word(w) for w in span.split()):
        return None  # the whole, or words that answer nothing ("The": a real cut of GEEK's)
    return span


def respan(references: Sequence[Reference], stated: str, concise: str) -> list[Reference]:
    """References that carried the stated sentence now carry the concise answer, with its place
    in their passage where it occurs there (the sentence itself rarely does)."""
    out = []
    for ref in references:
        if ref.answer == stated:
            ref = replace(ref, answer=concise, span=locate(concise, ref.passage.text) or ref.span)
        out.append(ref)
    return out
