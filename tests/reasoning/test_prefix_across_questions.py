"""The few-shot prefix is evaluated once per loaded model, not once per question (#37): the
second question's first Chain-of-Query evaluates only what follows the shared prefix, although
the reader's and the final answer's prompts came in between."""

from __future__ import annotations

from dataclasses import replace

import pytest

from searchain.config import ReasoningSettings
from searchain.llm.base import GenerationParams
from searchain.reader.llm_reader import LLMReader
from searchain.reasoning.engine import SearChainEngine
from tests.fixtures.reasoning import QUESTION

pytestmark = pytest.mark.slow  # a real (tiny) llama.cpp model answers two questions

TINY_GRAMMAR = r"""
root ::= "[Query 1]: " query "\n" "[Answer 1]: " [a-zA-Z] [a-zA-Z ]{0,10} "\n" "[Final Content]: " [a-zA-Z ]{1,20} "\n"
query ::= ("Where was Kevin Drew born?" | "Who is the performer of Spirit If...?")
"""


class CallLog:
    """Passes calls to the model and keeps (first message text, usage) of each."""

    def __init__(self, llm):
        self.llm, self.calls = llm, []

    def chat(self, messages, *args, **kwargs):
        out = self.llm.chat(messages, *args, **kwargs)
        self.calls.append((messages[0]["content"], out.usage))
        return out

    def __getattr__(self, name):
        return getattr(self.llm, name)


def test_the_second_question_reuses_the_few_shot_prefix(tiny_llm_settings, retriever):
    from searchain.llm.llama.llama_cpp_backend import LlamaCppLLM

    llm = LlamaCppLLM(tiny_llm_settings)
    try:
        log = CallLog(llm)
        engine = SearChainEngine(log, retriever, LLMReader(log, max_tokens=8),
                                 settings=replace(ReasoningSettings(), duplicate_threshold=2.0, r_max=1),
                                 chain_grammar=TINY_GRAMMAR, generation=GenerationParams(max_tokens=80))
        questions = [QUESTION, "Where do the buses of the city where Kevin Drew was born leave from?"]
        firsts = []
        for question in questions:
            before = len(log.calls)
            engine.answer(question)
            assert len(log.calls) - before >= 2  # the chain and at least the final answer in between
            firsts.append(log.calls[before])
        prefix = _shared_prefix_tokens(llm, firsts[0][0], firsts[1][0])
        assert prefix > 100, prefix  # the few-shot examples
        first_usage, second_usage = firsts[0][1], firsts[1][1]
        assert first_usage.prompt_tokens_evaluated == first_usage.prompt_tokens  # nothing to reuse yet
        # Question 2 evaluates only what follows the shared prefix (+1: the last token is redone).
        assert second_usage.prompt_tokens_evaluated <= second_usage.prompt_tokens - prefix + 1
    finally:
        llm.close()


def _shared_prefix_tokens(llm, first: str, second: str) -> int:
    a = llm.tokenize(llm.render_chat([{"role": "user", "content": first}]), add_special=False)
    b = llm.tokenize(llm.render_chat([{"role": "user", "content": second}]), add_special=False)
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n
