"""The grammar walker writes what each of our grammars accepts, and goes on, then concludes."""

import pytest

from searchain.llm.base import GenerationParams
from searchain.llm.fakes.grammar_walker import Grammar, GrammarWalkerLLM
from searchain.reasoning.chain import grammar as chain_grammars
from searchain.reasoning.chain.parser import parse_chain
from searchain.reasoning.strategies import grammar as sg
from searchain.reasoning.strategies import parse as sp

ACTIONS = ("AddDecomp", "RetrieveExtract", "SelfAnswer", "FinalAnswer")


def test_chain_goes_on_with_answers_then_leaves_queries_unsolved():
    walker = GrammarWalkerLLM(closing_after=1)
    first = parse_chain(walker.walk(chain_grammars.coq_grammar(), call=1))
    later = parse_chain(walker.walk(chain_grammars.coq_grammar(), call=2))
    assert [n.answer for n in first.steps] == ["step 1.2", "step 1.4"]
    assert [n.query for n in first.steps] == ["step 1.1", "step 1.3"]  # distinct: no duplicate skip
    assert all(n.unsolved for n in later.steps) and len(later.steps) == 2
    assert first.final_content


def test_strategy_grammars_parse_as_their_steps_expect():
    walker = GrammarWalkerLLM(closing_after=1)
    assert sp.parse_deduction(walker.walk(sg.deduce_grammar(), 1)).sub_question == "step 1.1"
    assert sp.parse_deduction(walker.walk(sg.deduce_grammar(), 2)).final_answer == "step 2.1"
    assert sp.parse_grounding(walker.walk(sg.ground_grammar(3), 1), 3).empty
    grounded = sp.parse_grounding(walker.walk(sg.ground_grammar(3), 2), 3)
    assert not grounded.empty and grounded.passage == 1
    assert sp.parse_action(walker.walk(sg.action_grammar(ACTIONS), 1), ACTIONS) == "AddDecomp"
    assert sp.parse_action(walker.walk(sg.action_grammar(ACTIONS), 2), ACTIONS) == "FinalAnswer"
    assert len(sp.parse_options(walker.walk(sg.decomp_grammar(4), 1), 4)) == 2
    assert sp.parse_fact(walker.walk(sg.extract_grammar(3), 1), 3) == (None, None)
    assert sp.parse_conclusion(walker.walk(sg.conclude_grammar(yes_no=True), 2))[1] == "no"


def test_field_caps_are_kept():
    text = GrammarWalkerLLM().walk('root ::= "A: " lead qchar{0,3}\nlead ::= [^\\n]\nqchar ::= [^\\n]\n', 1)
    assert text == "A: step"


def test_calls_without_grammar_get_free_text_and_reset_starts_over():
    walker = GrammarWalkerLLM(closing_after=1)
    out = walker.chat([{"role": "user", "content": "two words"}])
    assert out.text == walker.free_text and out.usage.prompt_tokens == 2
    grammar = GenerationParams(grammar=sg.action_grammar(ACTIONS))
    assert walker.chat([{"role": "user", "content": "q"}], grammar).text.strip() == "[Action]: FinalAnswer"
    walker.reset()
    assert walker.chat([{"role": "user", "content": "q"}], grammar).text.strip() == "[Action]: AddDecomp"
    assert walker.total_calls == 3


@pytest.mark.parametrize("text", ["root ::= foo ~ bar\n", "nothing here\n", 'other ::= "x"\n', 'root ::= ( "x"\n', 'root ::= missing\n'])
def test_unreadable_grammar_is_refused(text):
    with pytest.raises(ValueError):
        Grammar(text)
