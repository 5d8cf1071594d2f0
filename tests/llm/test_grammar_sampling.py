"""Grammar decoding samples first and checks one token (issue #23 point 7): it must write exactly
what filtering the whole vocabulary writes (greedy), and only text the grammar accepts."""

from __future__ import annotations

import pytest

from searchain.llm.base import GenerationParams
from searchain.reasoning.chain.grammar import coq_grammar, final_content_grammar, standalone_grammar

PROMPTS = ("Who wrote The Lantern Suite?", "Where was the composer born?", "x")
GRAMMARS = {
    "chain": coq_grammar(3, query_chars=40, answer_chars=30, final_chars=60),
    "final": final_content_grammar(final_chars=60),
    "rewrite": standalone_grammar(60),
}
# llama.cpp's grammar engine takes any byte sequence that looks like UTF-8 as characters, and
# the random-weight model writes such bytes, which come back as U+FFFD in the text. Validity is
# checked on the generated tokens, and on the text with the same grammars held to ASCII.
ASCII = {kind: g.replace(r"[^\n\r\[\]]", r"[ -Z\\^-~]").replace(r"[^\n\r\[\] \t]", r"[!-Z\\^-~]")
         for kind, g in GRAMMARS.items()}


def _generate(llm, prompt: str, params: GenerationParams, *, sample_first: bool):
    llm.grammar_sample_first = sample_first
    try:
        return llm.chat([{"role": "user", "content": prompt}], params)
    finally:
        llm.grammar_sample_first = True


def _check_valid(llm, grammar: str, completion) -> None:
    verdict = llm.grammar_verdict(grammar, llm.last_generated_tokens())
    if completion.finish_reason == "stop":
        assert verdict == "complete", completion.text
    else:  # cut by the token limit: a valid beginning
        assert completion.finish_reason == "length" and verdict in ("incomplete", "complete")


@pytest.mark.parametrize("kind", sorted(GRAMMARS))
def test_greedy_output_equals_the_full_vocabulary_filter(tiny_llm, kind):
    for grammar in (GRAMMARS[kind], ASCII[kind]):
        params = GenerationParams(max_tokens=160, grammar=grammar, logprobs=True)
        for prompt in PROMPTS:
            fast = _generate(tiny_llm, prompt, params, sample_first=True)
            slow = _generate(tiny_llm, prompt, params, sample_first=False)
            assert fast.text == slow.text and fast.finish_reason == slow.finish_reason
            assert fast.token_logprobs == pytest.approx(slow.token_logprobs, abs=1e-4)  # KV reuse: float noise
            _check_valid(tiny_llm, grammar, fast)
            if grammar == ASCII[kind]:
                assert tiny_llm.grammar_verdict(grammar, fast.text) in ("complete", "incomplete")


def test_sampled_outputs_follow_the_grammar(tiny_llm):
    grammar = ASCII["chain"]
    texts = set()
    for seed in range(4):
        c = _generate(tiny_llm, PROMPTS[0], GenerationParams(
            max_tokens=160, temperature=1.0, seed=seed, grammar=grammar), sample_first=True)
        _check_valid(tiny_llm, grammar, c)
        _check_valid(tiny_llm, GRAMMARS["chain"], c)
        texts.add(c.text)
    assert len(texts) > 1  # the seeds really sample


def test_both_paths_of_the_sampler_run(tiny_llm):
    """The random-weight model's first choice is often outside a narrow grammar (the slow path
    runs) and always inside a grammar that allows every character (the fast path alone)."""
    narrow = r'root ::= "[Question]: " [a-z ]{5,30} "\n"'
    c = _generate(tiny_llm, "x", GenerationParams(max_tokens=60, grammar=narrow), sample_first=True)
    assert tiny_llm.grammar_rejections > 0 and c.text.startswith("[Question]: ")
    wide = r'root ::= [\x00-\U0010FFFF]+'
    c = _generate(tiny_llm, "x", GenerationParams(max_tokens=30, grammar=wide), sample_first=True)
    assert c.usage.completion_tokens == 30 and tiny_llm.grammar_rejections == 0


def test_grammar_verdict(tiny_llm):
    grammar = r'root ::= "The " [a-z]+ "."'
    assert tiny_llm.grammar_verdict(grammar, "The cat.") == "complete"
    assert tiny_llm.grammar_verdict(grammar, "The ca") == "incomplete"
    assert tiny_llm.grammar_verdict(grammar, "A cat.") == "rejected"
    assert tiny_llm.grammar_verdict(GRAMMARS["rewrite"], "[Question]: Who is he?\n") == "complete"


def test_rejections_are_settled_from_the_shortlist_with_the_same_output(tiny_llm):
    """After a rejection the grammar first judges the best-logit shortlist; greedy output stays
    the whole-vocabulary filter's, and the full filter runs only when the shortlist holds no
    allowed token."""
    from searchain.llm.llama import sampling

    narrow = r'root ::= "[Question]: " [a-z ]{5,30} "\n"'
    params = GenerationParams(max_tokens=60, grammar=narrow)
    slow = _generate(tiny_llm, "x", params, sample_first=False)
    fast = _generate(tiny_llm, "x", params, sample_first=True)
    assert fast.text == slow.text
    assert tiny_llm.grammar_rejections > 0 and tiny_llm.grammar_full_filters < tiny_llm.grammar_rejections
    original = sampling.SHORTLIST
    sampling.SHORTLIST = 1  # a shortlist of the rejected token alone never settles anything
    try:
        tiny = _generate(tiny_llm, "x", params, sample_first=True)
    finally:
        sampling.SHORTLIST = original
    assert tiny.text == slow.text and tiny_llm.grammar_full_filters == tiny_llm.grammar_rejections > 0
