"""The reader asked inside the draft's conversation (#37, ``reasoning.reader_context = "draft"``):
a node's passage that the draft read is read as one more turn of the draft's chat, whose KV state
is kept, and any other passage as before."""

from __future__ import annotations

from dataclasses import replace

import pytest

from searchain.config import ReasoningSettings
from searchain.errors import ConfigError
from searchain.llm.base import Completion, GenerationParams, Usage
from searchain.reader.llm_reader import NOT_FOUND, LLMReader
from searchain.reasoning.draft_reader import DraftContextReader, reader_in_draft
from searchain.reasoning.engine import SearChainEngine
from searchain.types import Passage
from tests.fixtures.reasoning import QUESTION
from tests.reasoning.test_prefix_across_questions import TINY_GRAMMAR, CallLog

FIRST = Passage(pid="a", corpus="c", title="Kevin Drew", text="Kevin Drew was born in Toronto in 1976.")
SECOND = Passage(pid="b", corpus="c", title="Spirit If...", text="Spirit If... is an album by Kevin Drew.")
OTHER = Passage(pid="z", corpus="c", title="Toronto", text="Toronto is the capital of Ontario.")
DRAFT_CHAT = [{"role": "user", "content": "Answer the question using the numbered passages below. ..."}]


class Replies:
    """A chat model that answers each call with the next reply (and no log-probabilities)."""

    supports_grammar = True

    def __init__(self, *replies: str):
        self.replies, self.calls = list(replies), []

    def chat(self, messages, params=GenerationParams(), **_):
        self.calls.append((messages, params))
        text = self.replies.pop(0)
        return Completion(text=text, usage=Usage(10, 10, 2), finish_reason="stop", token_logprobs=(-0.01, -0.02))


def test_a_passage_the_draft_read_is_read_in_its_conversation_by_number():
    llm = Replies("Toronto", "Ontario")
    reader = DraftContextReader(LLMReader(llm), DRAFT_CHAT, "So the final answer is Toronto [1].", [SECOND, FIRST])
    result = reader.read("Where was Kevin Drew born?", FIRST.title, FIRST.text)
    messages, params = llm.calls[0]
    assert messages[:1] == DRAFT_CHAT and messages[1] == {"role": "assistant",
                                                          "content": "So the final answer is Toronto [1]."}
    assert messages[2]["role"] == "user" and "passage [2]" in messages[2]["content"]
    assert "Where was Kevin Drew born?" in messages[2]["content"] and NOT_FOUND in messages[2]["content"]
    assert params.grammar is not None and params.logprobs and params.temperature == 0.0  # the reader's own
    assert result.answer == "Toronto" == FIRST.text[result.start:result.end] and result.confidence > 0.9
    assert reader.in_draft == 1
    # A passage the draft did not read: the reader's own prompt, as before.
    other = reader.read("What is Toronto the capital of?", OTHER.title, OTHER.text)
    assert llm.calls[1][0][0]["role"] == "system" and other.answer == "Ontario" and reader.in_draft == 1


def test_only_a_reader_over_the_chat_model_is_wrapped():
    class Lexical:
        def read(self, *args):
            return None

    lexical = Lexical()
    assert reader_in_draft(lexical, DRAFT_CHAT, "x", [FIRST]) is lexical
    assert reader_in_draft(None, DRAFT_CHAT, "x", [FIRST]) is None
    assert isinstance(reader_in_draft(LLMReader(Replies()), DRAFT_CHAT, "x", [FIRST]), DraftContextReader)


def test_an_unknown_reader_context_is_refused(retriever):
    engine = SearChainEngine(Replies(), retriever, LLMReader(Replies()),
                             settings=replace(ReasoningSettings(), reader_context="everywhere"))
    with pytest.raises(ConfigError, match="reader context"):
        engine.answer(QUESTION)


@pytest.mark.slow  # a real (tiny) llama.cpp model
def test_in_the_draft_conversation_the_read_evaluates_only_its_turn(tiny_llm_settings, retriever):
    from searchain.llm.llama_cpp_backend import LlamaCppLLM

    llm = LlamaCppLLM(tiny_llm_settings)
    try:
        log = CallLog(llm)
        settings = replace(ReasoningSettings(), duplicate_threshold=2.0, r_max=1, reader_context="draft")
        engine = SearChainEngine(log, retriever, LLMReader(log, max_tokens=8), settings=settings,
                                 chain_grammar=TINY_GRAMMAR, generation=GenerationParams(max_tokens=80))
        calls = []
        real_chat = log.chat

        def chat(messages, *args, **kwargs):
            out = real_chat(messages, *args, **kwargs)
            calls.append((len(messages), out.usage))
            return out

        log.chat = chat
        engine.answer(QUESTION)
        draft_usage = calls[0][1]
        in_draft = [usage for n, usage in calls if n == 3]  # draft chat, its reply, the reader's turn
        assert in_draft, "no node's passage was read in the draft's conversation"
        for usage in in_draft:
            # The draft's prompt (and reply) came from its saved KV state: only the new turn, and
            # the draft's reply as the template closes it, were evaluated.
            assert usage.prompt_tokens > draft_usage.prompt_tokens
            assert usage.prompt_tokens_evaluated < usage.prompt_tokens - draft_usage.prompt_tokens + 20
    finally:
        llm.close()


def test_the_reading_benchmark_drafts_each_musique_record_once_over_the_steps_passages():
    from searchain.bench.reader_spans import DEFAULT_DATA, draft_chats, musique_steps

    steps = musique_steps(DEFAULT_DATA, 6)
    llm = Replies(*[f"draft {n}" for n in range(6)])
    draft_for = draft_chats(DEFAULT_DATA, steps, llm)
    assert llm.calls == []  # a record's draft is written when its first step asks for it
    for question, title, text, _ in steps:
        chat, reply, passages = draft_for(question)
        assert any(p.title == title and p.text == text for p in passages) and len(passages) == 3
        assert chat[0]["content"].startswith("Answer the question using the numbered passages")
    records = {draft_for(question)[1] for question, *_ in steps}
    assert len(llm.calls) == len(records) < len(steps)  # one draft a record, several steps each
