"""Issue #23.8: every model call is counted, per phase, the LLM reader's included; and the
final content composed when the model's own is unusable reads as clean sentences."""


import pytest

from searchain.cli.ask import result_to_json
from searchain.eval.datasets import EvalDataset, EvalQuestion
from searchain.eval.runner import run_eval
from searchain.llm.base import GenerationParams
from searchain.llm.fakes.scripted import ScriptedLLM
from searchain.reader.llm_reader import LLMReader
from searchain.reasoning.engine import SearChainEngine
from searchain.reasoning.result import DECISION_COMPLETED, SOURCE_IR_COMPLETED, Node
from searchain.reasoning.tracing import compose_from_path, finalize
from tests.fixtures.reasoning import PASSAGES, Q1, Q2, QUESTION, chain, loop_settings

TRACE = "[Final Content]: Kevin Drew [1] was born in Toronto [2]. So the final answer is Toronto."


class CountingLLM:
    """Passes calls through to a model and adds up what each one reports using."""

    def __init__(self, llm):
        self.llm, self.prompt, self.completion, self.calls = llm, 0, 0, 0

    def chat(self, *args, **kwargs):
        out = self.llm.chat(*args, **kwargs)
        self.prompt += out.usage.prompt_tokens
        self.completion += out.usage.completion_tokens
        self.calls += 1
        return out

    def __getattr__(self, name):
        return getattr(self.llm, name)


def _engine(llm, retriever, reader, **kw):
    return SearChainEngine(llm, retriever, reader, settings=loop_settings(duplicate_threshold=2.0), **kw)


def test_the_readers_calls_are_counted_in_their_own_phase(retriever):
    # One model for the chain, the reader and the tracing, as in the app without a DPR reader.
    model = CountingLLM(ScriptedLLM([chain((Q1, "Kevin Drew"), (Q2, "Toronto")), "Kevin Drew", "Toronto", TRACE]))
    result = _engine(model, retriever, LLMReader(model)).answer(QUESTION)
    assert model.calls == 4
    assert (result.prompt_tokens, result.completion_tokens) == (model.prompt, model.completion)
    phases = result.tokens_by_phase
    assert set(phases) == {"chain", "reader", "final"}
    assert phases["reader"][1] == 3  # "Kevin Drew" + "Toronto"
    assert sum(p for p, _ in phases.values()) == result.prompt_tokens
    assert sum(c for _, c in phases.values()) == result.completion_tokens
    assert result_to_json(result)["tokens_by_phase"] == phases  # `searchain ask --json`


def test_eval_reports_tokens_per_phase_that_add_up(retriever):
    model = ScriptedLLM([chain((Q1, "Kevin Drew"), (Q2, "Toronto")), "Kevin Drew", "Toronto", TRACE])
    dataset = EvalDataset(path="mem", kind="hotpotqa", fingerprint="0",
                          questions=(EvalQuestion(id="q1", question=QUESTION, answers=("Toronto",)),))
    report = run_eval(_engine(model, retriever, LLMReader(model)), dataset, mode="searchain")
    by_phase = report.tokens_per_question_by_phase
    assert by_phase["reader"][0] > 0
    assert sum(p for p, _ in by_phase.values()) == report.prompt_tokens_per_question
    assert sum(c for _, c in by_phase.values()) == report.completion_tokens_per_question


def test_fallback_final_content_is_clean_sentences():
    # The traced shape: the node's answer is a sentence and the model's own final was cut off.
    node = Node(1, 0, "Who composed The Lantern Suite?", None, unsolved=True,
                reader_answer="The Lantern Suite was written by Ansel Ruddock.", decision=DECISION_COMPLETED,
                source=SOURCE_IR_COMPLETED, passage=PASSAGES[0])
    text, refs = finalize("The Lantern Suite was written by ...", [node])
    assert ".." not in text and "answer is The Lantern" not in text
    assert text == "Who composed The Lantern Suite? The Lantern Suite was written by Ansel Ruddock [1]."
    assert [r.mark for r in refs] == [1]
    short = Node(1, 0, "Who composed The Lantern Suite?", None, unsolved=True, reader_answer="Ansel Ruddock.",
                 decision=DECISION_COMPLETED, source=SOURCE_IR_COMPLETED, passage=PASSAGES[0])
    assert compose_from_path([short], "So the final answer is Ansel Ruddock..") == (
        "Who composed The Lantern Suite? Ansel Ruddock [1]. So the final answer is Ansel Ruddock.")


TINY_GRAMMAR = r"""
root ::= node1 final
node1 ::= "[Query 1]: " query "\n" "[Answer 1]: " answer "\n"
query ::= ("Where was Kevin Drew born?" | "Who is the performer of Spirit If...?")
answer ::= [a-zA-Z] [a-zA-Z ]{0,10}
final ::= "[Final Content]: " [a-zA-Z] ([a-zA-Z .] | "[1]"){0,30} "\n"?
"""


@pytest.mark.slow
def test_real_tiny_model_every_call_counted_with_the_llm_reader(tiny_llm, retriever):
    model = CountingLLM(tiny_llm)
    reader = LLMReader(model, max_tokens=8)
    eng = _engine(model, retriever, reader, chain_grammar=TINY_GRAMMAR,
                  generation=GenerationParams(max_tokens=120))
    result = eng.answer(QUESTION)
    assert result.tokens_by_phase.get("reader", [0, 0])[0] > 0  # the reader read a passage
    assert (result.prompt_tokens, result.completion_tokens) == (model.prompt, model.completion)
