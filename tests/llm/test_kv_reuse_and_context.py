"""KV prefix reuse across dialogue rounds, counted by llama.cpp itself; the context-window rule."""

import llama_cpp
import pytest

from searchain.errors import ModelError
from searchain.events import CancelToken
from searchain.llm.base import GenerationParams
from searchain.llm.chat_prompt import fit_messages
from searchain.llm.llama.llama_cpp_backend import LlamaCppLLM

ANSWER = r'root ::= "[Answer]: " [a-z ]{5,15} "\n"'


@pytest.fixture
def fresh_llm(tiny_llm_settings):
    llm = LlamaCppLLM(tiny_llm_settings)
    yield llm
    llm.close()


def _llama_cpp_prompt_evals(llm) -> int:
    return llama_cpp.llama_perf_context(llm._llama._ctx.ctx).n_p_eval


def test_later_rounds_evaluate_only_their_new_tokens(fresh_llm):
    messages = [{"role": "system", "content": "Answer each question with one short line. " * 5},
                {"role": "user", "content": "Question one: who wrote Hamlet?"}]
    params = GenerationParams(max_tokens=40, grammar=ANSWER)
    usages = []
    for question in ("Question two: when?", "Question three: where?", None):
        llama_cpp.llama_perf_context_reset(fresh_llm._llama._ctx.ctx)
        c = fresh_llm.chat(messages, params)
        usages.append(c.usage)
        # Our count is what llama.cpp really decoded for the prompt.
        assert c.usage.prompt_tokens_evaluated == _llama_cpp_prompt_evals(fresh_llm)
        if question:
            messages = messages + [{"role": "assistant", "content": c.text},
                                   {"role": "user", "content": question}]
    first, second, third = usages
    assert first.prompt_tokens_evaluated == first.prompt_tokens
    for previous, current in ((first, second), (second, third)):
        new_tokens = current.prompt_tokens - previous.prompt_tokens - previous.completion_tokens
        # Only the turn markers and the new question, plus at most the reply's last token
        # (sampled but never decoded) are evaluated.
        assert new_tokens <= current.prompt_tokens_evaluated <= new_tokens + 2
        assert current.prompt_tokens_evaluated < current.prompt_tokens / 3


def test_a_changed_prefix_is_re_evaluated_from_the_change(fresh_llm):
    params = GenerationParams(max_tokens=2)
    a = fresh_llm.complete("The same start, then one ending", params)
    b = fresh_llm.complete("The same start, then another ending", params)
    assert a.usage.prompt_tokens_evaluated == a.usage.prompt_tokens
    ta = fresh_llm.tokenize("The same start, then one ending")
    tb = fresh_llm.tokenize("The same start, then another ending")
    common = next(i for i, (x, y) in enumerate(zip(ta, tb)) if x != y)
    assert common > 10
    assert b.usage.prompt_tokens_evaluated == len(tb) - common
    c = fresh_llm.complete("Something else entirely", params)
    assert c.usage.prompt_tokens_evaluated == c.usage.prompt_tokens


def test_prompt_longer_than_context_is_a_clear_error(tiny_llm):
    with pytest.raises(ModelError, match="context holds 2048"):
        tiny_llm.complete("word " * 3000)
    assert tiny_llm.complete("still fine", GenerationParams(max_tokens=2)).usage.completion_tokens == 2


def test_generation_stops_at_the_end_of_the_context(tiny_llm):
    prompt_tokens = len(tiny_llm.tokenize("x" * 2040))
    assert prompt_tokens < 2048
    c = tiny_llm.complete("x" * 2040, GenerationParams(max_tokens=100))
    assert c.finish_reason == "length"
    assert c.usage.completion_tokens == 2048 - prompt_tokens


def test_long_dialogue_drops_oldest_turns_keeping_system_and_last(tiny_llm):
    turns = []
    for i in range(12):
        turns += [{"role": "user", "content": f"question {i} " + "blah " * 60},
                  {"role": "assistant", "content": f"answer {i} " + "bleh " * 60}]
    messages = [{"role": "system", "content": "SYSTEM RULES"}] + turns + [
        {"role": "user", "content": "LAST QUESTION"}]
    assert len(tiny_llm.tokenize(tiny_llm.render_chat(messages))) > 2048
    c = tiny_llm.chat(messages, GenerationParams(max_tokens=8))
    assert c.dropped_messages > 0 and c.dropped_messages % 2 == 0
    assert c.usage.prompt_tokens <= 2048 - 8


def _count_words(messages):
    return sum(len(m["content"].split()) for m in messages)


def test_fit_messages_rule():
    msgs = [{"role": "system", "content": "s s"},
            {"role": "user", "content": "u1 " * 10}, {"role": "assistant", "content": "a1 " * 10},
            {"role": "user", "content": "u2 " * 10}, {"role": "assistant", "content": "a2 " * 10},
            {"role": "user", "content": "last"}]
    kept, dropped = fit_messages(msgs, count_tokens=_count_words, n_ctx=40, max_tokens=8)
    # budget 40 - 8 = 32 words: drop u1+a1 (the assistant is not left at the front), keep the rest
    assert dropped == 2
    assert [m["content"][:2] for m in kept] == ["s ", "u2", "a2", "la"]
    kept, dropped = fit_messages(msgs, count_tokens=_count_words, n_ctx=1000, max_tokens=8)
    assert dropped == 0 and kept == msgs


def test_fit_messages_fails_clearly_when_system_and_last_do_not_fit():
    msgs = [{"role": "system", "content": "s " * 50}, {"role": "user", "content": "q " * 50}]
    with pytest.raises(ModelError, match="even after dropping"):
        fit_messages(msgs, count_tokens=_count_words, n_ctx=64, max_tokens=8)


class _CancelAfterChecks(CancelToken):
    """A token that becomes cancelled on its n-th check (so the cancel lands mid-prompt)."""

    def __init__(self, checks: int):
        super().__init__()
        self._left = checks

    @property
    def cancelled(self) -> bool:
        self._left -= 1
        if self._left < 0:
            self.cancel()
        return super().cancelled


def test_cancel_during_prompt_evaluation_keeps_the_work_done(fresh_llm):
    prompt = "lorem ipsum dolor sit amet " * 40
    n_prompt = len(fresh_llm.tokenize(prompt))
    assert n_prompt > 2 * fresh_llm.n_batch
    c = fresh_llm.complete(prompt, GenerationParams(max_tokens=5), cancel=_CancelAfterChecks(2))
    assert c.finish_reason == "cancelled" and c.usage.completion_tokens == 0
    assert c.usage.prompt_tokens_evaluated == 2 * fresh_llm.n_batch
    # The next call picks up where the cancelled one stopped.
    again = fresh_llm.complete(prompt, GenerationParams(max_tokens=5))
    assert again.usage.prompt_tokens_evaluated == n_prompt - 2 * fresh_llm.n_batch
    assert again.usage.completion_tokens == 5


def test_a_dialogue_interrupted_by_another_prompt_resumes_from_its_saved_state(fresh_llm):
    """Round 1 of a dialogue, an unrelated prompt (the reader's, in SearChain), then round 2:
    round 2 evaluates only its new tokens, from KV cells that are a copy of the uninterrupted
    dialogue's (same output, same log-probabilities)."""
    system = {"role": "system", "content": "Answer each question with one short line. " * 12}
    opening = [system, {"role": "user", "content": "Question one: who wrote Hamlet?"}]
    params = GenerationParams(max_tokens=24, grammar=ANSWER, logprobs=True)

    def dialogue(interrupt: bool):
        fresh_llm.reset_cache()  # forgets the saved states too
        assert len(fresh_llm._prefix_states) == 0
        first = fresh_llm.chat(opening, params)
        if interrupt:
            fresh_llm.complete("An unrelated reader prompt about a passage " * 8, GenerationParams(max_tokens=4))
        messages = opening + [{"role": "assistant", "content": first.text},
                              {"role": "user", "content": "Question two: when?"}]
        llama_cpp.llama_perf_context_reset(fresh_llm._llama._ctx.ctx)
        second = fresh_llm.chat(messages, params)
        assert second.usage.prompt_tokens_evaluated == _llama_cpp_prompt_evals(fresh_llm)
        new_tokens = second.usage.prompt_tokens - first.usage.prompt_tokens - first.usage.completion_tokens
        assert new_tokens <= second.usage.prompt_tokens_evaluated <= new_tokens + 2
        return second

    plain = dialogue(interrupt=False)
    restored_before = fresh_llm._prefix_states.restored
    resumed = dialogue(interrupt=True)
    assert fresh_llm._prefix_states.saved >= 1 and fresh_llm._prefix_states.restored == restored_before + 1
    assert resumed.text == plain.text
    assert resumed.token_logprobs == pytest.approx(plain.token_logprobs, abs=1e-4)


def test_prefix_states_keep_within_their_byte_budget(fresh_llm):
    from searchain.llm.llama.prefix_states import PrefixStates

    fresh_llm._prefix_states = states = PrefixStates(budget_bytes=1)  # nothing fits
    fresh_llm.complete("A long first prompt that fills the cache " * 8, GenerationParams(max_tokens=2))
    c = fresh_llm.complete("Something else entirely, also long enough " * 8, GenerationParams(max_tokens=2))
    assert states.saved == 0 and len(states) == 0 and c.usage.prompt_tokens_evaluated == c.usage.prompt_tokens
