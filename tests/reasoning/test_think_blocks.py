"""A reasoning model's think blocks never reach the chain parser or the answer (#22)."""


from searchain.llm.fakes.scripted import ScriptedLLM
from searchain.reasoning.engine import SearChainEngine
from searchain.reasoning.result import DECISION_PASS
from tests.fixtures.reasoning import Q1, Q2, Q3, QUESTION, HashingEmbedder, chain, loop_settings

THINK = "<think>\nThe question asks [Query 1]: something else? [Answer 1]: Vancouver.\n</think>\n\n"
TRACE = ("[Final Content]: Spirit If... is by Kevin Drew [1]. He was born in Toronto [2]. "
         "Greyhound buses leave from the Toronto Coach Terminal [3]. So the final answer is "
         "Toronto Coach Terminal.")


def test_think_blocks_are_stripped_before_parsing_and_answering(retriever, reader):
    llm = ScriptedLLM([THINK + chain((Q1, "Kevin Drew"), (Q2, "Toronto"),
                                     (Q3, "Toronto Coach Terminal")),
                       "<think>Trace it.</think>" + TRACE])
    engine = SearChainEngine(llm, retriever, reader, settings=loop_settings(),
                             embedder=HashingEmbedder())
    result = engine.answer(QUESTION)
    assert [n.decision for n in result.path] == [DECISION_PASS] * 3  # not the thought's query
    assert [n.query for n in result.path] == [Q1, Q2, Q3]
    assert result.answer == "Toronto Coach Terminal"
    assert all("<think>" not in b.raw_text and "Vancouver" not in b.raw_text
               for b in result.branches)
