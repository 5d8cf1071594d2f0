"""Follow-up questions: rewritten with the conversation, then answered; both kept on the result."""

from dataclasses import replace

import pytest

from searchain.llm.fakes.scripted import ScriptedLLM
from searchain.reasoning.chain.parser import parse_chain
from searchain.reasoning.engine import SearChainEngine
from searchain.reasoning.events import PHASE_REWRITE, QuestionRewritten, TokenGenerated
from searchain.reasoning.followup import (
    STANDALONE_CHARS, PriorTurn, format_turns, parse_standalone, standalone_grammar,
)
from tests.fixtures.reasoning import HashingEmbedder, chain, loop_settings

HISTORY = [
    PriorTurn("Who released the album Spirit If...?",
              "Spirit If... was released by Kevin Drew [1]. So the final answer is Kevin Drew."),
]
FOLLOW_UP = "Where was he born?"
STANDALONE = "Where was Kevin Drew born?"


class RecordingRetriever:
    """Wraps a retriever and records every query it is asked."""

    def __init__(self, inner):
        self.inner, self.queries = inner, []

    def search(self, query, k):
        self.queries.append(query)
        return self.inner.search(query, k)


def engine(llm, retriever, reader, **settings):
    return SearChainEngine(llm, retriever, reader, settings=loop_settings(**settings),
                           embedder=HashingEmbedder())


def test_follow_up_is_rewritten_then_chained_retrieved_and_traced(retriever, reader):
    llm = ScriptedLLM([
        f"[Question]: {STANDALONE}",
        chain((STANDALONE, "Toronto"), final="Kevin Drew was born in Toronto [1]."),
        "[Final Content]: Kevin Drew was born in Toronto [1]. So the final answer is Toronto.",
    ])
    spy = RecordingRetriever(retriever)
    events = []
    result = engine(llm, spy, reader).answer(FOLLOW_UP, history=HISTORY, on_event=events.append)
    rewrite_prompt = llm.calls[0][0]["content"]
    assert "Spirit If... was released by Kevin Drew. So" in rewrite_prompt  # marks stripped
    assert rewrite_prompt.rstrip().endswith(f"[New Question]: {FOLLOW_UP}")
    assert llm.params[0].grammar == standalone_grammar()
    assert llm.params[0].max_tokens <= 128
    # The chain prompt and the tracing prompt see the standalone question, not the pronoun.
    assert STANDALONE in llm.calls[1][0]["content"] and FOLLOW_UP not in llm.calls[1][0]["content"]
    assert STANDALONE in llm.calls[2][0]["content"]
    # The node's search, then the question's own (reasoning.question_passages): both with the
    # standalone question, never the follow-up as typed.
    assert spy.queries == [STANDALONE, STANDALONE]
    rewritten = [e for e in events if isinstance(e, QuestionRewritten)]
    assert rewritten == [QuestionRewritten(FOLLOW_UP, STANDALONE)]
    assert events.index(rewritten[0]) < min(i for i, e in enumerate(events) if type(e).__name__ == "RoundStarted")
    assert {e.phase for e in events if isinstance(e, TokenGenerated)} >= {PHASE_REWRITE}
    assert result.question == FOLLOW_UP and result.standalone_question == STANDALONE
    assert result.searched_question == STANDALONE
    assert result.path[0].passage.pid == "p2" and result.answer == "Toronto"
    assert llm.remaining == 0


def test_without_history_or_with_followups_off_the_question_is_taken_as_typed(retriever, reader):
    for history, turns in (((), 3), (HISTORY, 0)):
        llm = ScriptedLLM([chain((STANDALONE, "Toronto"), final="Toronto [1]."), "[Final Content]: Toronto [1]."])
        result = engine(llm, retriever, reader, followup_turns=turns).answer(STANDALONE, history=history)
        assert "[New Question]" not in llm.calls[0][0]["content"]
        assert result.standalone_question is None and result.searched_question == STANDALONE
        assert llm.remaining == 0


def test_only_the_last_turns_are_shown_to_the_rewrite(retriever, reader):
    history = [PriorTurn(f"Question number {i}?", f"Answer number {i}.") for i in range(6)]
    llm = ScriptedLLM([f"[Question]: {FOLLOW_UP}", "[Final Content]: I do not know."])
    result = engine(llm, retriever, reader, followup_turns=2).answer(FOLLOW_UP, mode="direct", history=history)
    prompt = llm.calls[0][0]["content"]
    assert "Question number 4?" in prompt and "Question number 5?" in prompt
    assert "Question number 3?" not in prompt
    # The model kept the question unchanged: nothing to show as a rewrite.
    assert result.standalone_question is None


@pytest.mark.parametrize("reply, expected", [
    (f"[Question]: {STANDALONE}\n", STANDALONE),
    (f'[Question]: "{STANDALONE}"', STANDALONE),
    (f"Sure.\n[Question]: {STANDALONE}\n[Question]: other", STANDALONE),
    (STANDALONE, STANDALONE),  # no marker (no grammar): the first line
    ("[Question]:   ", FOLLOW_UP),  # empty
    ("", FOLLOW_UP),
    ("[Question]: ?!", FOLLOW_UP),  # no word at all
    ("[Question]: " + "x" * (STANDALONE_CHARS + 1), FOLLOW_UP),  # runaway
])
def test_parse_standalone_falls_back_on_the_question_as_typed(reply, expected):
    assert parse_standalone(reply, FOLLOW_UP) == expected


def test_long_answers_are_cut_in_the_rewrite_prompt():
    text = format_turns([PriorTurn("Q?", "word " * 400)])
    assert text.startswith("[Earlier Question]: Q?\n[Earlier Answer]: word")
    assert text.endswith(" ...") and len(text) < 500


def test_rewrite_through_real_llama_cpp_is_one_bounded_line(tiny_llm, retriever, reader):
    # Random weights write gibberish, but the grammar makes it one [Question] line; the engine
    # answers whatever it parsed and records it (or the typed question if nothing usable came).
    eng = SearChainEngine(tiny_llm, retriever, reader, settings=loop_settings(),
                          embedder=HashingEmbedder())
    eng.generation = replace(eng.generation, max_tokens=200, temperature=1.0, seed=5)
    events = []
    result = eng.answer(FOLLOW_UP, mode="direct", history=HISTORY, on_event=events.append)
    (rewritten,) = [e for e in events if isinstance(e, QuestionRewritten)]
    assert rewritten.original == FOLLOW_UP
    assert rewritten.standalone and "\n" not in rewritten.standalone
    assert len(rewritten.standalone) <= STANDALONE_CHARS
    assert result.searched_question == rewritten.standalone
    rewrite_text = "".join(e.text for e in events if isinstance(e, TokenGenerated) and e.phase == PHASE_REWRITE)
    assert rewrite_text.startswith("[Question]: ")
    assert parse_standalone(rewrite_text, FOLLOW_UP) == rewritten.standalone
    assert not parse_chain(rewrite_text).steps  # it is not a chain the loop could mistake


def test_grammar_rejects_silly_lengths():
    from searchain.errors import ConfigError

    with pytest.raises(ConfigError, match="out of range"):
        standalone_grammar(3)
