"""GenGround and GEEK through the real llama.cpp (tiny random-weight GGUF) under their grammars:
every model output parses, and every [n] of the final answer resolves to a stored passage."""

from searchain.reasoning.chain.parser import marks_in
from searchain.reasoning.result import (
    DECISION_EMPTY, DECISION_EXTRACTED, DECISION_GROUNDED, DECISION_SELF_ANSWERED, DECISION_UNGROUNDED,
)
from tests.fixtures.reasoning import PASSAGES
from tests.reasoning.strategy_helpers import FILLER, FixedRetriever, engine

CAPS = 24  # random weights run every field to its cap: keep prompts inside the tiny context
# Random weights may conclude at once; this deduction grammar (the same format, without the
# [Final Answer] choice) makes them deduce until r_max, so that grounding runs on every hop.
ALWAYS_DEDUCE = (
    'root ::= "[Sub-question]: " text "\\n[Answer]: " text "\\n"?\n'
    'text ::= [a-zA-Z] [a-zA-Z ]{0,20}\n'
)


def _check_marks(result, stored):
    for _, numbers in marks_in(result.final_content):
        for n in numbers:
            assert 1 <= n <= len(result.path) and result.path[n - 1].passage in stored
    for ref in result.references:
        assert ref.passage == result.path[ref.mark - 1].passage and ref.passage in stored
        if ref.span is not None:
            assert 0 <= ref.span[0] < ref.span[1] <= len(ref.passage.text)


def test_genground_with_the_tiny_model_parses_every_step(tiny_llm):
    stored = PASSAGES + FILLER[:2]
    options = {"genground": {"field_chars": CAPS, "deduce_gbnf": ALWAYS_DEDUCE}}
    e = engine(tiny_llm, FixedRetriever(stored), r_max=2, options=options)
    result = e.answer("Who wrote it?", mode="genground")
    assert result.branches
    for branch in result.branches:
        assert branch.raw_text.startswith("[Sub-question]: ")
        nodes = branch.nodes
        assert nodes and all(n.query for n in nodes)
        assert all(n.decision == DECISION_EMPTY for n in nodes[:-1])  # batches tried before the last
        assert nodes[-1].decision in (DECISION_GROUNDED, DECISION_UNGROUNDED)
        assert len(nodes) <= 3  # 7 passages: batches of 3, 3, 1 (+ "stands" when none helped)
    assert result.path == [b.nodes[-1] for b in result.branches]
    assert result.final_content and result.stop_reason in ("r_max", "repeated_chain")
    _check_marks(result, stored)


def test_geek_with_the_tiny_model_parses_every_action(tiny_llm):
    stored = PASSAGES[:3]
    e = engine(tiny_llm, FixedRetriever(stored), r_max=2,
               options={"geek": {"field_chars": CAPS, "branches": 2, "max_leaves": 2}})
    result = e.answer("Is Toronto in Canada?", mode="geek")
    assert 1 <= len(result.branches) <= 2 and result.rounds == len(result.branches)
    for branch in result.branches:
        assert branch.final_content in ("yes", "no")  # an implicit question's grammar
        assert all(n.query and n.decision in (DECISION_EXTRACTED, DECISION_SELF_ANSWERED, DECISION_UNGROUNDED)
                   for n in branch.nodes)
        assert branch.feedback.splitlines()[-1].startswith("FinalAnswer: ")
    assert result.answer in ("yes", "no")
    _check_marks(result, stored)
