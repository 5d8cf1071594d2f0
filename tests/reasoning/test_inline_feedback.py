"""IR's feedback written into the chain (``reasoning.feedback_style = "inline"``, #37): a corrected
or completed step gets IR's answer in place of the model's, in the model's own reply, and the chain
goes on in the same round; no feedback turn is sent and no settled step is written again.

``ScriptedReplyLLM`` continues a reply that the caller changed only where its next scripted reply
begins with the changed text, as a deterministic model continuing that text would."""

import pytest

from searchain.errors import ConfigError
from searchain.llm.fakes.scripted import ScriptedReplyLLM
from searchain.reasoning.engine import SearChainEngine
from searchain.reasoning.events import FEEDBACK_COMPLETION, FEEDBACK_CORRECTION, FeedbackGiven
from searchain.reasoning.result import DECISION_COMPLETED, DECISION_CORRECTED, DECISION_DUPLICATE, DECISION_PASS
from searchain.reasoning.loop.stepwise import NEXT_STEP, StepWriter
from tests.fixtures.reasoning import Q1, Q2, Q3, QUESTION, HashingEmbedder, chain, loop_settings
from tests.reasoning.test_stepwise import DIALOGUES, FINAL, _answer, _path, _reader, _retriever

# IR's answer to Q2 goes in with the passage it came from (the fixture's Kevin Drew passage).
REFERENCE = ("[Reference]: Kevin Drew: Kevin Drew was born in Toronto, Ontario, and co-founded the band "
             "Broken Social Scene.")
CONTINUED = chain((Q1, "Kevin Drew"), (Q2, "Toronto"), (Q3, "Toronto Coach Terminal")).replace(
    "[Answer 2]: Toronto\n", f"[Answer 2]: Toronto\n{REFERENCE}\n")
INLINE = {
    "corrected": [chain((Q1, "Kevin Drew"), (Q2, "Vancouver"), (Q3, "Pacific Central Station")), CONTINUED, FINAL],
    "completed": [chain((Q1, "Kevin Drew"), (Q2, None), (Q3, "Toronto Coach Terminal")), CONTINUED, FINAL],
}


@pytest.mark.parametrize("name, decision, kind", [("corrected", DECISION_CORRECTED, FEEDBACK_CORRECTION),
                                                  ("completed", DECISION_COMPLETED, FEEDBACK_COMPLETION)])
def test_irs_answer_replaces_the_models_and_the_chain_goes_on_in_the_same_round(name, decision, kind):
    llm = ScriptedReplyLLM(INLINE[name])
    result, events = _answer(llm, "stepwise", feedback_style="inline")
    assert llm.remaining == 0
    (branch,) = result.branches  # one round: nothing was sent back as a turn
    assert result.rounds == 1 and result.stop_reason == "finish"
    assert [(n.query, n.decision) for n in branch.nodes] == [(Q1, DECISION_PASS), (Q2, decision), (Q3, DECISION_PASS)]
    assert branch.nodes[1].llm_answer == ("Vancouver" if name == "corrected" else None)
    assert branch.nodes[1].answer == "Toronto"
    # The model continued its own reply, with IR's answer where it had written its own.
    chain_calls = [call for call in llm.calls if call[-1]["role"] == "assistant" and "[Query 3]" not in call[-1]["content"]]
    continued = [call[-1]["content"] for call in chain_calls if f"[Query 2]: {Q2}" in call[-1]["content"]]
    assert continued[-1].endswith(f"[Answer 2]: Toronto\n{REFERENCE}\n")
    assert not any(m["role"] == "user" and "According to the reference" in m["content"]
                   for call in llm.calls for m in call)
    assert branch.raw_text == CONTINUED.split("\n[Final Content]")[0]
    # The tree hears of it, as of any feedback, with what was written into the chain.
    (given,) = [e for e in events if isinstance(e, FeedbackGiven)]
    assert given.kind == kind and given.node.query == Q2 and '"Toronto"' in given.text
    assert branch.feedback == given.text


@pytest.mark.parametrize("name", ["corrected", "completed"])
def test_the_verified_path_is_the_one_turns_give(name):
    turns, _ = _answer(ScriptedReplyLLM(DIALOGUES[name]), "stepwise")
    inline, _ = _answer(ScriptedReplyLLM(INLINE[name]), "stepwise", feedback_style="inline")
    assert [(q, a) for q, a, *_ in _path(inline)] == [(q, a) for q, a, *_ in _path(turns)]
    assert inline.answer == turns.answer
    # Fewer prompt tokens: no feedback turn with its passage.
    assert inline.tokens_by_phase["chain"][0] < turns.tokens_by_phase["chain"][0]


def test_inline_is_the_default_and_turns_are_still_there():
    from searchain.config import ReasoningSettings

    assert ReasoningSettings().feedback_style == "inline"
    llm = ScriptedReplyLLM(DIALOGUES["corrected"])
    result, _ = _answer(llm, "stepwise", feedback_style="turn")
    assert result.rounds == 2
    assert any(m["role"] == "user" and "According to the reference" in m["content"] for call in llm.calls for m in call)


class _OneReply:
    """A generator stand-in that writes one fixed text per call."""

    on_event = None  # nothing watches the stream

    def __init__(self, *texts):
        from searchain.llm.base import GenerationParams

        self.texts, self.params = list(texts), GenerationParams()

    def chat(self, messages, phase, grammar, *, stop_at=(), max_tokens=None):
        from searchain.llm.base import Completion, Usage

        return Completion(text=self.texts.pop(0), usage=Usage(1, 1, 1), finish_reason="stop", stopped_at=NEXT_STEP)


def test_only_the_last_steps_answer_line_is_replaced():
    writer = StepWriter(_OneReply("[Query 1]: A?\n[Answer 1]: x", "[Query 2]: B?\n[Unsolved Query]: B?"), [], 6,
                        write_headers=False)
    writer.write()
    writer.write()
    assert writer.answer_in_place("Toronto", "Kevin Drew:  born in\nToronto")
    assert writer.text == ("[Query 1]: A?\n[Answer 1]: x\n[Query 2]: B?\n[Answer 2]: Toronto\n"
                           "[Reference]: Kevin Drew: born in Toronto\n")
    assert writer.written == 2 and not writer.done
    # A passage that holds a marker cannot add a step to the chain.
    writer.answer_in_place("Toronto", "Drew: see [Query 3]: Who? [Answer 3]: x")
    assert writer.text.endswith("[Reference]: Drew: see (Query 3): Who? (Answer 3): x\n") and writer.written == 2


def test_a_header_the_model_wrote_nothing_after_is_taken_back():
    from searchain.llm.base import Completion, Usage

    class EndsAtOnce(_OneReply):  # a grammar applies, yet the reply ends with nothing written
        grammars_apply = True

        def chat(self, messages, phase, grammar, **_):
            self.seen = messages[-1]["content"]
            return Completion(text="", usage=Usage(1, 1, 0), finish_reason="stop", stopped_at="")

    writer = StepWriter(gen := EndsAtOnce(), [], 6)
    assert writer.write() == [] and writer.done
    assert gen.seen == "[Query 1]:"  # the call began with the header...
    assert writer.text == ""  # ...which is not left dangling as an empty step


def test_a_step_without_an_answer_line_of_its_own_is_left_for_a_turn():
    writer = StepWriter(_OneReply("[Query 1]: Who wrote it? Answer: x"), [], 6, write_headers=False)
    writer.write()
    before = writer.text
    assert not writer.answer_in_place("Toronto")
    assert writer.text == before


def test_an_unknown_feedback_style_is_refused_by_name():
    engine = SearChainEngine(ScriptedReplyLLM([FINAL]), _retriever(), _reader(),
                             settings=loop_settings(feedback_style="inline-ish"), embedder=HashingEmbedder())
    with pytest.raises(ConfigError, match="inline-ish"):
        engine.answer(QUESTION)


def test_with_irs_answer_in_view_the_model_may_conclude_at_once():
    concluded = chain((Q1, "Kevin Drew"), (Q2, "Toronto"), final="So the final answer is Toronto.").replace(
        "[Answer 2]: Toronto\n", f"[Answer 2]: Toronto\n{REFERENCE}\n")
    llm = ScriptedReplyLLM([chain((Q1, "Kevin Drew"), (Q2, "Vancouver"), (Q3, "Pacific Central Station")),
                            concluded, FINAL])
    result, _ = _answer(llm, "stepwise", feedback_style="inline")
    (branch,) = result.branches
    assert [(n.query, n.decision) for n in branch.nodes] == [(Q1, DECISION_PASS), (Q2, DECISION_CORRECTED)]
    assert result.stop_reason == "finish" and llm.remaining == 0
    chain_calls = [(call[-1]["content"], params.grammar) for call, params in zip(llm.calls, llm.params)
                   if call[-1]["role"] == "assistant"]
    # The call after IR's answer requires no further step and begins with no header of the loop's;
    # every other call begins a step, whose header the loop wrote (the grammar goes on after it).
    after = [grammar for text, grammar in chain_calls if text.endswith(f"{REFERENCE}\n")]
    others = [(text, grammar) for text, grammar in chain_calls if not text.endswith(f"{REFERENCE}\n")]
    assert len(after) == 1 and after[0].startswith("root ::= (node3 ")
    assert others and all(text.endswith(f"[Query {n}]:") and grammar.startswith(f"root ::= node{n} ")
                          and f'node{n} ::= " " query' in grammar for n, (text, grammar) in enumerate(others, 1))


def test_a_step_asked_again_ends_an_inline_chain():
    looping = chain((Q1, "Kevin Drew"), (Q2, "Toronto"), (Q1, "Kevin Drew"), (Q3, "Toronto Coach Terminal"))
    continued = looping.replace("[Answer 2]: Toronto\n", f"[Answer 2]: Toronto\n{REFERENCE}\n")
    llm = ScriptedReplyLLM([chain((Q1, "Kevin Drew"), (Q2, "Vancouver")), continued, FINAL])
    result, _ = _answer(llm, "stepwise", feedback_style="inline")
    (branch,) = result.branches
    assert [n.decision for n in branch.nodes] == [DECISION_PASS, DECISION_CORRECTED, DECISION_DUPLICATE]
    assert result.stop_reason == "finish" and Q3 not in branch.raw_text  # nothing written after it
    turns, _ = _answer(ScriptedReplyLLM([looping, FINAL]), "stepwise")
    assert [n.decision for n in turns.branches[0].nodes][-1] == DECISION_PASS  # turns check on past it


def test_the_unsolved_querys_copy_is_the_loops_with_inline_feedback_only():
    from searchain.reasoning.loop.stepwise import UNSOLVED_STOP

    inline = ScriptedReplyLLM(INLINE["completed"])
    _answer(inline, "stepwise", feedback_style="inline")
    turns = ScriptedReplyLLM(DIALOGUES["completed"])
    _answer(turns, "stepwise")
    assert any(UNSOLVED_STOP in (p.stop or ()) for p in inline.params)
    assert not any(UNSOLVED_STOP in (p.stop or ()) for p in turns.params)
