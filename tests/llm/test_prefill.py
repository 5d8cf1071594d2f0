"""llama.cpp continues a reply (#37): a trailing assistant message is a prefill, continued from its
KV cache, and a chain written step by step is the chain written whole, token for token."""

from __future__ import annotations

from dataclasses import replace

import pytest

from searchain.llm.base import GenerationParams
from searchain.reasoning.chain.grammar import coq_grammar
from searchain.reasoning.chain.parser import parse_chain
from searchain.reasoning.parts import Generator
from searchain.reasoning.loop.stepwise import FINAL_LINE, NEXT_STEP, STEP_ENDS, StepWriter

pytestmark = pytest.mark.slow  # a real (tiny) llama.cpp model

MESSAGES = [{"role": "user", "content": "Where was the performer of Spirit If... born?"}]


def three_steps(start: int = 1, **options) -> str:
    """``coq_grammar(3)`` from step ``start`` with small fields and every step required (this
    random model would otherwise conclude after one)."""
    text = coq_grammar(3, query_chars=12, answer_chars=10, final_chars=20, start=start, **options)
    nodes = " ".join(f"node{n}" for n in range(start, 4))
    return "\n".join(f"root ::= {nodes} final" if line.startswith("root ::=") else line
                     for line in text.splitlines()) + "\n"


def test_a_trailing_assistant_message_is_continued_from_the_cache(tiny_llm):
    params = GenerationParams(max_tokens=400, temperature=0.0, grammar=three_steps())
    tiny_llm.reset_cache()
    whole = tiny_llm.chat(MESSAGES, params)
    first = tiny_llm.chat(MESSAGES, replace(params, stop=STEP_ENDS))
    assert first.stopped_at == NEXT_STEP and whole.text.startswith(first.text + "\n[Query 2]: ")
    assert whole.stopped_at == ""
    prefix = first.text + "\n"
    rest = tiny_llm.chat(MESSAGES + [{"role": "assistant", "content": prefix}],
                         replace(params, grammar=three_steps(start=2)))
    assert rest.text.startswith("[Query 2]: ")  # the grammar restarts at the second step
    assert prefix + rest.text == whole.text  # greedy: the continued reply is the whole reply
    # Only what follows the cached reply is evaluated: the newline, and the last token redone.
    assert rest.usage.prompt_tokens_evaluated <= 3, rest.usage
    assert rest.usage.prompt_tokens > 30


def test_the_step_writer_writes_the_whole_chain_step_by_step(tiny_llm):
    gen = Generator(tiny_llm, GenerationParams(max_tokens=400, temperature=0.0), True, None, None)
    tiny_llm.reset_cache()
    whole = gen.chat(MESSAGES, "chain", three_steps()).text
    # This random model writes anything on an [Unsolved Query] line; a real one copies its query,
    # which the writer then writes itself (the next test).
    writer = StepWriter(gen, list(MESSAGES), 3, grammar_for=three_steps, copy_unsolved=False)
    while not writer.done:
        writer.write()
    steps = parse_chain(whole).steps
    assert len(steps) == 3 and parse_chain(writer.text).steps == steps
    assert writer.calls == 3  # the last step's call also stops where the final line begins
    assert writer.reached_final and whole.startswith(writer.text)
    assert FINAL_LINE in whole and FINAL_LINE not in writer.text


def test_the_headers_the_grammar_forces_are_written_not_decoded(tiny_llm):
    def write(headers: bool) -> tuple[str, int]:
        gen = Generator(tiny_llm, GenerationParams(max_tokens=400, temperature=0.0), True, None, None)
        tiny_llm.reset_cache()
        writer = StepWriter(gen, list(MESSAGES), 3, grammar_for=three_steps, copy_unsolved=False,
                            write_headers=headers)
        while not writer.done:
            writer.write()
        return writer.text, gen.completion_tokens

    (written, fewer), (decoded, more) = write(True), write(False)
    assert written == decoded  # greedy: the same chain, token for token
    assert fewer <= more - 3 * 4, (fewer, more)  # "[Query n]:" is 5 tokens with most vocabularies


def test_an_unsolved_querys_copy_is_written_not_decoded(tiny_llm):
    import re

    def unsolved_always(start: int = 1, **options) -> str:  # every step unsolved: the copy is tested
        return re.sub(r'\( "\[Answer \d\]: " answer \| ("\[Unsolved Query\]: " query) \)', r"\1",
                      three_steps(start, **options))

    gen = Generator(tiny_llm, GenerationParams(max_tokens=400, temperature=0.0), True, None, None)
    tiny_llm.reset_cache()
    whole = gen.chat(MESSAGES, "chain", unsolved_always()).text
    writer = StepWriter(gen, list(MESSAGES), 3, grammar_for=unsolved_always)
    while not writer.done:
        writer.write()
    pairs = re.findall(r"\[Query (\d)\]: ([^\n]*)\n\[Unsolved Query\]: ([^\n]*)", writer.text)
    assert [n for n, _, _ in pairs] == ["1", "2", "3"]
    assert all(query == copy for _, query, copy in pairs)  # the format's copy, word for word
    assert whole.startswith(f"[Query 1]: {pairs[0][1]}\n[Unsolved Query]: ")  # the model's own first query
    assert writer.calls == 3  # a call a step, each stopped where its copy begins


def test_the_model_worker_process_continues_replies_too(tiny_llm_settings, tiny_llm):
    from searchain.llm.llama.isolated import ProcessLLM
    from searchain.reasoning.loop.stepwise import can_write_stepwise

    params = GenerationParams(max_tokens=400, temperature=0.0, grammar=three_steps())
    tiny_llm.reset_cache()
    want = tiny_llm.chat(MESSAGES, params).text
    worker = ProcessLLM(tiny_llm_settings)
    try:
        assert can_write_stepwise(worker)  # so SearChain writes its chains step by step there
        first = worker.chat(MESSAGES, replace(params, stop=STEP_ENDS))
        assert first.stopped_at == NEXT_STEP
        rest = worker.chat(MESSAGES + [{"role": "assistant", "content": first.text + "\n"}],
                           replace(params, grammar=three_steps(start=2)))
        assert first.text + "\n" + rest.text == want
    finally:
        worker.close()
