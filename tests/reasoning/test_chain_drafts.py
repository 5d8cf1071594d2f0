"""The first node of the tree shows as soon as the model has written it (issue #37): while the
chain streams, ``ChainDrafted`` carries the steps finished so far, before ``ChainGenerated``."""

from __future__ import annotations


from searchain.llm.fakes.scripted import ScriptedLLM
from searchain.reader.llm_reader import LLMReader
from searchain.reasoning.engine import SearChainEngine
from searchain.reasoning.events import ChainDrafted, ChainGenerated, TokenGenerated
from searchain.reasoning.loop.run import StepDrafts
from tests.fixtures.reasoning import Q1, Q2, QUESTION, chain, loop_settings

TRACE = "[Final Content]: Kevin Drew [1] was born in Toronto [2]. So the final answer is Toronto."


def test_steps_are_shown_one_by_one_before_the_chain_ends(retriever):
    model = ScriptedLLM([chain((Q1, "Kevin Drew"), (Q2, "Toronto")), "Kevin Drew", "Toronto", TRACE])
    engine = SearChainEngine(model, retriever, LLMReader(model),
                             settings=loop_settings(duplicate_threshold=2.0))
    events: list = []
    engine.answer(QUESTION, on_event=events.append)
    drafted = [i for i, e in enumerate(events) if isinstance(e, ChainDrafted)]
    generated = next(i for i, e in enumerate(events) if isinstance(e, ChainGenerated))
    assert [len(events[i].branch.nodes) for i in drafted] == [1, 2]
    first = events[drafted[0]].branch.nodes[0]
    assert (first.query, first.llm_answer, first.round, first.position) == (Q1, "Kevin Drew", 1, 0)
    # The first node arrives while the chain is still being written, not after it.
    chain_tokens_after = [e for e in events[drafted[0]:generated]
                          if isinstance(e, TokenGenerated) and e.phase == "chain"]
    assert chain_tokens_after, "the first node came only after the whole chain"
    assert drafted[-1] < generated
    final_nodes = events[generated].branch.nodes
    assert [n.query for n in events[drafted[-1]].branch.nodes] == [n.query for n in final_nodes]


def test_a_step_is_drafted_only_once_its_answer_line_is_complete():
    seen: list = []
    drafts = StepDrafts(2, (1, 0), seen.append)
    for piece in ["[Query 1]: Who wrote it?\n", "[Answer 1]: Ansel", " Ruddock"]:
        drafts.feed(piece)
    assert seen == []  # the answer line has not ended: "Ansel" could become "Ansel Ruddock"
    drafts.feed("\n[Unsolved Query]: Where was he born?\n")
    assert len(seen) == 1 and seen[0].round == 2 and seen[0].branch.parent == (1, 0)
    assert seen[0].branch.nodes[0].llm_answer == "Ansel Ruddock"
    drafts.feed("[Final Content]: He was born in Leeds.\n")
    assert [len(e.branch.nodes) for e in seen] == [1, 2] and seen[1].branch.nodes[1].unsolved


def test_no_parsing_without_a_listener():
    drafts = StepDrafts(1, None, None)
    drafts.feed("[Query 1]: Who?\n[Answer 1]: Me\n")
    assert drafts.shown == 0
