"""The LLM reader asked inside the draft's conversation, where the node's passage is one the
draft read (``reasoning.reader_context = "draft"``).

SearChain's draft is RAG's answer over the question's top passages (``engine._draft``), and
most nodes' top passages are among them (73 % of the path's on HotpotQA's first 100). The reader
alone sends its instruction, its worked example and the passage again for every node (~110
tokens evaluated a call with Qwen). Asked as one more turn of the draft's conversation instead,
its prompt is the draft's prompt and reply, whose KV state the backend kept aside
(``llm/prefix_states.py``), plus one short turn naming the passage by its number: ~30 tokens.
The reply is constrained to that passage's spans and located in it, with the confidence
computed as the reader's own (``LLMReader.params`` and ``result_from_reply``). A passage the
draft did not read is read by the reader as before.
"""

from __future__ import annotations

from typing import Any

from ..reader.llm_reader import NOT_FOUND
from ..types import Passage

READER_CONTEXTS = ("passage", "draft")

# Short: every token of it is evaluated per read. The grammar does the rest (passage spans only).
_TURN = "Copy from passage [{n}] the few words that answer: {question}\nIf it does not say, reply: {not_found}"


class DraftContextReader:
    """``Reader`` over an ``LLMReader``: passages the draft read are read in its conversation."""

    def __init__(self, reader: Any, messages: list[dict], reply: str, passages: list[Passage]):
        self.reader = reader
        self.llm = reader.llm
        self.name = f"{reader.name} (in the draft's conversation)"
        self.threshold = reader.threshold
        self.messages = list(messages)
        self.reply = reply
        self.passages = list(passages)
        self.in_draft = 0  # reads answered in the draft's conversation (for benchmarks and tests)

    def number_of(self, title: str, passage_text: str) -> int | None:
        """The passage's number in the draft's prompt (1-based), None if the draft did not read it."""
        for n, passage in enumerate(self.passages, start=1):
            if passage.text == passage_text and passage.title == title:
                return n
        return None

    def messages_for(self, question: str, n: int) -> list[dict]:
        turn = _TURN.format(n=n, question=" ".join(question.split()), not_found=NOT_FOUND)
        return [*self.messages, {"role": "assistant", "content": self.reply}, {"role": "user", "content": turn}]

    def read(self, question: str, title: str, passage_text: str):
        n = self.number_of(title, passage_text)
        if n is None:
            return self.reader.read(question, title, passage_text)
        completion = self.llm.chat(self.messages_for(question, n), self.reader.params(passage_text))
        self.in_draft += 1
        return self.reader.result_from_reply(completion.text, passage_text, completion.token_logprobs,
                                             question=question, cut_off=completion.finish_reason == "length")

    def read_many(self, question: str, passages: list[tuple[str, str]]):
        return [self.read(question, title, text) for title, text in passages]


def reader_in_draft(reader: Any, messages: list[dict], reply: str, passages: list[Passage]) -> Any:
    """``reader`` wrapped so that the draft's passages are read in its conversation; a reader
    without a chat model of its own (DPR, test readers) is returned unchanged."""
    if reader is None or not hasattr(reader, "result_from_reply") or not hasattr(reader, "params"):
        return reader
    return DraftContextReader(reader, messages, reply, passages)
