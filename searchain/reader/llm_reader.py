"""A reader that uses the loaded chat model when no DPR reader is installed.

The model is asked for the shortest span of the passage that answers the question (or to say
the answer is not there). Where the backend takes GBNF grammars, decoding is constrained to the
passage's own spans (``span_grammar``): the model can only copy. Its reply is then cut down to
the answer when it is a sentence ("The father of Kasper Schmeichel is Peter Schmeichel." ->
"Peter Schmeichel", ``span_extract``) and located in the passage: exactly, then ignoring case and
spacing, then as the best-matching window of passage words, so that the returned answer is
always ``passage_text[start:end]`` and the UI can highlight it. Confidence is exp(mean token
log-probability) of the reply, lowered for long spans, replies cut off by the token limit and
copies of the passage's opening (``span_extract.honest_confidence``); 0 when the reply is not in
the passage or the backend returned no log-probabilities (then this reader can still complete
unsolved queries but never overrides the LLM's own answers).
"""

from __future__ import annotations

import difflib
import math
import re

from ..llm.base import GenerationParams
from ..llm.model_kind import strip_special_tokens
from .base import ReaderResult
from .passage_trim import trim_passage
from .span_extract import answer_candidates, copies_passage_opening, honest_confidence
from .span_grammar import passage_span_grammar

NOT_FOUND = "NOT FOUND"
FUZZY_MIN_RATIO = 0.75  # below this the best window is a different text, not a sloppy copy

_SYSTEM = (
    "You read one passage and answer a question from it. Reply with the shortest span copied "
    "word for word from the passage that answers the question (a name, a date, a place: a few "
    "words, never a sentence), and nothing else. If the passage does not answer the question, "
    f"reply exactly: {NOT_FOUND}"
)
# (question, title, passage, answer): invented, so that it is found in no corpus.
_EXAMPLE = ("Who designed the Velmor Bridge?", "Velmor Bridge",
            "The Velmor Bridge is a steel arch bridge over the Hanna River. It opened in 1911 and "
            "was designed by the engineer Ruth Calloway, who also built the Dunmere viaduct.",
            "Ruth Calloway")


def _user_turn(question: str, title: str, passage_text: str) -> str:
    return f"Passage ({title}):\n{passage_text}\n\nQuestion: {question}\nAnswer span:"


_PREFIX = re.compile(r"^\s*(answer( span)?|span|reply)\s*[:\-]\s*", re.IGNORECASE)
_QUOTES = "\"'“”‘’`"
_NOT_FOUND_PATTERNS = re.compile(
    r"^(not found|none|n/?a|unknown|no answer)\b|not (in|mentioned in|contained in) the passage"
    r"|passage does not (answer|contain|mention)",
    re.IGNORECASE,
)
_WORD = re.compile(r"\S+")
_EDGE_PUNCTUATION = ".,;:!?\"'()[]“”‘’`"


class LLMReader:
    """``Reader`` backed by an ``LLM`` (the chat model the engine already loaded)."""

    def __init__(self, llm, *, threshold: float = 0.5, max_tokens: int = 32, sentences: int = 0):
        self.llm = llm
        self.name = f"llm:{getattr(llm, 'name', 'model')}"
        self.threshold = float(threshold)
        self.max_tokens = int(max_tokens)
        # Read only this many sentences of each passage, those most like the question
        # (``passage_trim``); 0 = the whole passage. The answer is located in the whole passage.
        self.sentences = int(sentences)

    def read(self, question: str, title: str, passage_text: str) -> ReaderResult:
        shown = trim_passage(question, passage_text, self.sentences) if self.sentences else passage_text
        completion = self.llm.chat(self.messages(question, title, shown), self.params(shown))
        return self.result_from_reply(completion.text, passage_text, completion.token_logprobs,
                                      question=question,
                                      cut_off=completion.finish_reason == "length")

    def messages(self, question: str, title: str, passage_text: str) -> list[dict]:
        """The chat the model is sent for one passage: one worked example, then the passage.

        Small models copy the example's form (a few words) far better than they follow the
        instruction; its answer cannot leak: it is in no real passage, and the reply must be."""
        return [
            {"role": "system", "content": _SYSTEM},
            {"role": "user", "content": _user_turn(*_EXAMPLE[:3])},
            {"role": "assistant", "content": _EXAMPLE[3]},
            {"role": "user", "content": _user_turn(question, title, passage_text)},
        ]

    def params(self, passage_text: str | None = None) -> GenerationParams:
        """Greedy, one line, with per-token log-probabilities for the confidence; constrained to
        the passage's spans when the backend takes grammars and ``passage_text`` is given."""
        grammar = None
        if passage_text is not None and getattr(self.llm, "supports_grammar", False):
            grammar = passage_span_grammar(passage_text, NOT_FOUND)
        return GenerationParams(max_tokens=self.max_tokens, temperature=0.0, stop=("\n",),
                                logprobs=True, grammar=grammar)

    def read_many(self, question: str, passages: list[tuple[str, str]]) -> list[ReaderResult]:
        # One call per passage: a chat model reads best one passage at a time.
        return [self.read(question, title, text) for title, text in passages]

    def result_from_reply(self, reply: str, passage_text: str, token_logprobs=(), *,
                          question: str = "", cut_off: bool = False) -> ReaderResult:
        """Turn the model's reply into a short ReaderResult located in ``passage_text``."""
        located = locate_answer(clean_reply(reply), passage_text, question)
        if located is None:
            return ReaderResult("", 0, 0, 0.0, self.threshold)
        start, end = located
        answer = passage_text[start:end]
        confidence = honest_confidence(
            confidence_from_logprobs(token_logprobs), span_words=len(answer.split()),
            reply_words=len(reply.split()), cut_off=cut_off,
            copies_opening=copies_passage_opening(reply, passage_text))
        return ReaderResult(answer, start, end, confidence, self.threshold)


def locate_answer(reply: str, passage: str, question: str = "") -> tuple[int, int] | None:
    """Where the answer the (cleaned) reply gives is in ``passage``: the first of its candidate
    spans (``span_extract.answer_candidates``) found there, edge punctuation trimmed."""
    if not reply:
        return None
    for candidate in answer_candidates(reply, question):
        located = _standalone_occurrence(candidate, passage) or locate_span(candidate, passage)
        if located is not None:
            start, end = _trim(passage, *located)
            if start < end:
                return start, end
    return None


def _standalone_occurrence(span: str, passage: str) -> tuple[int, int] | None:
    """The first occurrence of ``span`` (case/spacing-insensitive) that is not part of a longer
    name: "Peter Schmeichel" in "...goalkeeper Peter Schmeichel.", not in "Kasper Peter
    Schmeichel (born ...". None when every occurrence is embedded (``locate_span`` then decides)."""
    words = span.split()
    if not words:
        return None
    loose = re.compile(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)", re.IGNORECASE)
    for m in loose.finditer(passage):
        before = passage[max(0, m.start() - 40):m.start()].split()
        after = passage[m.end():m.end() + 40].split()
        capitalised = [w for w in (before[-1:] if before and passage[m.start() - 1:m.start()] == " " else [])
                       + (after[:1] if after and passage[m.end():m.end() + 1] == " " else [])
                       if w[:1].isupper()]
        if not capitalised:
            return m.start(), m.end()
    return None


def clean_reply(reply: str) -> str:
    """The span the model meant: first line, no "Answer:" prefix, no quotes; "" for not-found."""
    text = strip_special_tokens(reply or "").strip().split("\n", 1)[0].strip()
    text = _PREFIX.sub("", text).strip().strip(_QUOTES).strip()
    if not text or _NOT_FOUND_PATTERNS.search(text):
        return ""
    return text


def confidence_from_logprobs(token_logprobs) -> float:
    """exp(mean log-probability), in (0, 1]; 0.0 when there are none."""
    values = [float(v) for v in token_logprobs or () if v is not None and math.isfinite(float(v))]
    if not values:
        return 0.0
    return math.exp(sum(values) / len(values))


def locate_span(span: str, passage: str) -> tuple[int, int] | None:
    """Character offsets of ``span`` in ``passage``: exact, then case/spacing-insensitive, then
    the best fuzzy window of passage words (ratio >= FUZZY_MIN_RATIO); None when not there."""
    span = span.strip()
    if not span or not passage:
        return None
    at = passage.find(span)
    if at >= 0:
        return at, at + len(span)
    words = span.split()
    loose = re.compile(r"\s+".join(re.escape(w) for w in words), re.IGNORECASE)
    match = loose.search(passage)
    if match is None and span[-1] in _EDGE_PUNCTUATION:
        # "Stanley." when the passage says "Stanley,": retry without the trailing punctuation.
        return locate_span(span.rstrip(_EDGE_PUNCTUATION), passage)
    if match is not None:
        return match.start(), match.end()
    return _fuzzy_window(span, passage)


def _fuzzy_window(span: str, passage: str) -> tuple[int, int] | None:
    target = span.lower()
    tokens = [(m.start(), m.end()) for m in _WORD.finditer(passage)]
    n_words = len(span.split())
    best: tuple[float, int, int] | None = None
    for size in {max(1, n_words - 1), n_words, n_words + 1}:
        for i in range(0, max(0, len(tokens) - size) + 1):
            window = tokens[i : i + size]
            if not window:
                continue
            start, end = _trim(passage, window[0][0], window[-1][1])
            if start >= end:
                continue
            ratio = difflib.SequenceMatcher(None, target, passage[start:end].lower()).ratio()
            if best is None or ratio > best[0]:
                best = (ratio, start, end)
    if best is None or best[0] < FUZZY_MIN_RATIO:
        return None
    return best[1], best[2]


def _trim(passage: str, start: int, end: int) -> tuple[int, int]:
    """Shrink [start, end) past punctuation and white space at either edge (a window
    "(Stanley," -> "Stanley"; "0\r'" -> "0": white space behind the punctuation, too)."""
    while start < end and (passage[start] in _EDGE_PUNCTUATION or passage[start].isspace()):
        start += 1
    while end > start and (passage[end - 1] in _EDGE_PUNCTUATION or passage[end - 1].isspace()):
        end -= 1
    return start, end
