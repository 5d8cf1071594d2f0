"""A warm start (#37, latency a user feels): the fixed beginnings of a mode's prompts are read
before the first question, so that question evaluates only what follows them, as the second
question of a session does; and the workspace's warm-up loads what a first question would."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

from searchain.config import ReasoningSettings
from searchain.errors import Cancelled
from searchain.events import CancelToken
from searchain.llm.base import GenerationParams
from searchain.llm.fakes.scripted import ScriptedLLM
from searchain.reader.llm_reader import LLMReader
from searchain.reasoning.chain.prompts import PromptBook
from searchain.reasoning.engine import SearChainEngine
from searchain.reasoning.warmup import warm_prompts, warm_up
from tests.fixtures.reasoning import QUESTION
from tests.reasoning.test_prefix_across_questions import TINY_GRAMMAR, CallLog, _shared_prefix_tokens


def _kind(messages) -> str:
    first = messages[0]["content"]
    if messages[0]["role"] == "system":
        return "reader"
    return "rag" if first.startswith("Answer the question using the numbered passages") else "chain"


def test_searchain_reads_the_reader_and_the_draft_then_the_chain_that_comes_first_last():
    book, reader = PromptBook(), LLMReader(llm=None)
    chats = warm_prompts("searchain", ReasoningSettings(), book, reader)
    assert [_kind(chat) for chat in chats] == ["reader", "rag", "chain"]  # the first call of a question last
    draft_first = replace(ReasoningSettings(), draft_after_first_step=False)
    assert [_kind(chat) for chat in warm_prompts("searchain", draft_first, book, reader)] == ["reader", "chain", "rag"]
    whole = replace(ReasoningSettings(), chain_steps="whole")  # whole chains: the draft comes first
    assert [_kind(chat) for chat in warm_prompts("searchain", whole, book, reader)] == ["reader", "chain", "rag"]
    no_draft = replace(ReasoningSettings(), draft_answer=False)
    assert [_kind(chat) for chat in warm_prompts("searchain", no_draft, book, reader)] == ["reader", "chain"]
    assert [_kind(chat) for chat in warm_prompts("searchain", ReasoningSettings(), book, None)] == ["rag", "chain"]
    assert [_kind(chat) for chat in warm_prompts("rag", ReasoningSettings(), book)] == ["rag"]
    assert warm_prompts("direct", ReasoningSettings(), book) == []  # no fixed part worth reading


def _read_ahead(real: str, warmed: list[str], values) -> int:
    """How much of ``real`` a warmed prompt holds, less the characters before its first question
    or sub-question (the part no warm-up can know): >= 0 when all of the fixed part was read."""
    cut = min((real.find(v) for v in values if v in real), default=len(real))
    return max(len(os.path.commonprefix([real, w])) for w in warmed) - cut


@pytest.mark.parametrize("mode", ["genground", "geek"])
def test_the_strategies_prompts_are_read_ahead_up_to_the_question_first_call_last(mode):
    from tests.reasoning import test_genground as gg
    from tests.reasoning import test_geek as gk
    from tests.reasoning.strategy_helpers import FixedRetriever, engine

    if mode == "genground":
        script = [gg.step(gg.Q1, "Kevin Drew"), gg.cite(1, "by Kevin Drew", "Kevin Drew"), "[Final Answer]: Kevin Drew"]
        question, values, retriever = QUESTION, (QUESTION, gg.Q1), FixedRetriever([gg.P1, gg.P2, gg.P3])
    else:
        script = [gk.options((gk.QA, "Vancouver")), gk.act("Retrieve"), "[Fact from 1]: Kevin Drew was born in Toronto",
                  gk.act("AddDecomp"), gk.options(("Is the Toronto Coach Terminal in Toronto?", "yes")),
                  gk.act("SelfAnswer"), "[Fact]: Yes", gk.act("FinalAnswer"), gk.conclude("Toronto")]
        question, values = gk.QUESTION, (gk.QUESTION, gk.QA, "Is the Toronto Coach Terminal in Toronto?")
        retriever = FixedRetriever([gk.P2, gk.P1, gk.P3])
    llm = ScriptedLLM(script)
    engine(llm, retriever).answer(question, mode=mode, task="multihop")
    real = [call[0]["content"] for call in llm.calls]
    warmed = [chat[0]["content"] for chat in warm_prompts(mode, ReasoningSettings(), PromptBook())]
    assert all(_read_ahead(prompt, warmed, values) >= 0 for prompt in real), mode
    assert _read_ahead(real[0], warmed[-1:], values) >= 0  # the first call's prompt stays live


@pytest.mark.slow  # a real (tiny) llama.cpp model
def test_after_a_warm_up_the_first_question_evaluates_only_what_follows_the_fixed_text(tiny_llm_settings,
                                                                                      retriever):
    from searchain.llm.llama.llama_cpp_backend import LlamaCppLLM

    llm = LlamaCppLLM(tiny_llm_settings)
    try:
        log = CallLog(llm)
        settings = replace(ReasoningSettings(), duplicate_threshold=2.0, r_max=1)
        engine = SearChainEngine(log, retriever, LLMReader(log, max_tokens=8), settings=settings,
                                 chain_grammar=TINY_GRAMMAR, generation=GenerationParams(max_tokens=80))
        chats = warm_prompts("searchain", settings, engine.prompts, engine.reader)
        done = warm_up(log, chats)
        assert done.calls == 3 and done.evaluated_tokens > 300
        warmed = {_kind(chat): chat for chat in chats}
        before = len(log.calls)
        engine.answer(QUESTION)
        firsts = {}
        for content, usage in log.calls[before:]:
            kind = "reader" if content == warmed["reader"][0]["content"] else _kind([{"role": "user",
                                                                                      "content": content}])
            firsts.setdefault(kind, (content, usage))
        assert set(firsts) == {"rag", "chain", "reader"}
        for kind in ("rag", "chain"):
            content, usage = firsts[kind]
            shared = _shared_prefix_tokens(llm, warmed[kind][0]["content"], content)
            assert shared > 20, (kind, shared)
            # Only what follows the text read ahead is evaluated (+1: the last token is redone).
            assert usage.prompt_tokens_evaluated <= usage.prompt_tokens - shared + 1, kind
        reader_usage = firsts["reader"][1]
        assert reader_usage.prompt_tokens_evaluated < reader_usage.prompt_tokens - 60  # system and example
    finally:
        llm.close()


def test_a_cancelled_warm_up_stops_before_its_next_call():
    class Counting:
        calls = 0

        def chat(self, messages, params, *, cancel=None, on_token=None):
            self.calls += 1
            cancel.cancel()  # the user asked a question meanwhile
            from searchain.llm.base import Completion, Usage

            return Completion(text="x", usage=Usage(5, 1, 5), finish_reason="length")

    llm, chats = Counting(), warm_prompts("searchain", ReasoningSettings(), PromptBook(), None)
    with pytest.raises(Cancelled):
        warm_up(llm, chats, CancelToken())
    assert llm.calls == 1


@pytest.mark.slow
def test_the_workspace_warm_up_loads_the_model_and_opens_the_corpus(home, tiny_gguf, monkeypatch):
    from searchain.config import Settings
    from searchain.library import DEMO_NAME
    from searchain.workspace import Workspace

    settings = Settings()
    settings.llm.model_path, settings.llm.n_ctx, settings.llm.n_gpu_layers = str(tiny_gguf), 2048, 0
    settings.llm.isolation = "inprocess"
    settings.retrieval.retriever = "bm25"
    settings.reasoning.reader = "llm"
    settings.active_corpus = DEMO_NAME
    workspace = Workspace(home, settings)
    try:
        done = workspace.warm_up()
        assert workspace._llm is not None and workspace._retrievers  # the demo corpus, opened
        assert done.calls == 3 and done.evaluated_tokens > 300
        again = workspace.warm_up()  # the second time everything is read already
        assert again.evaluated_tokens < done.evaluated_tokens / 4
    finally:
        workspace.close()


def test_the_benchmark_reports_medians_ratios_and_changed_predictions():
    from searchain.bench.warmup import summarize

    def row(seconds, first, evaluated, prediction, warm=None):
        return {"seconds": seconds, "first_answer_seconds": first, "evaluated": evaluated,
                "prediction": prediction, "warm_up_seconds": warm, "warm_up_evaluated": warm and 600}

    report = summarize({"cold": [row(20, 5, 1300, "a"), row(30, 6, 1500, "b"), row(10, 4, 1100, "c")],
                        "warm": [row(12, 4, 700, "a", 6), row(15, 5, 900, "x", 7), row(6, 4, 500, "c", 6)]})
    assert report["cold"] == {"seconds_median": 20, "first_answer_seconds_median": 5, "evaluated_median": 1300}
    assert report["warm"]["seconds_median"] == 12 and report["warm"]["warm_up_seconds_median"] == 6
    assert report["warm_over_cold_seconds"] == 0.6 and report["warm_over_cold_first_answer_seconds"] == 0.8
    assert report["same_predictions"] == 2
