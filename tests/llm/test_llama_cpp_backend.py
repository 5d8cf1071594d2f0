"""The llama.cpp backend on the real tiny GGUF: grammar, streaming, stop, seed, cancel, usage."""

import re
import threading

import pytest

from searchain.errors import ModelError, SearchainError
from searchain.events import CancelToken
from searchain.llm.base import LLM, GenerationParams

QUERY_GRAMMAR = r'root ::= "[Query 1]: " [a-z ]{3,20} "\n"'
# A small Chain-of-Query shape: 1-3 numbered queries, each ending in a newline.
COQ_GRAMMAR = r'''
root  ::= query query? query?
query ::= "[Query " [1-3] "]: " [A-Za-z ]{2,12} "?\n"
'''


def test_implements_the_llm_protocol(tiny_llm):
    assert isinstance(tiny_llm, LLM)
    assert tiny_llm.supports_grammar
    assert tiny_llm.name == "tiny"


def test_grammar_gives_well_formed_text_in_bounded_tokens(tiny_llm):
    c = tiny_llm.complete("Plan the queries:", GenerationParams(max_tokens=64, grammar=QUERY_GRAMMAR))
    assert re.fullmatch(r"\[Query 1\]: [a-z ]{3,20}\n", c.text), c.text
    assert c.finish_reason == "stop"  # grammar complete -> only end-of-generation is allowed
    assert c.usage.completion_tokens == len(c.text.encode())  # one token per byte here, at most


def test_chain_of_query_grammar_in_chat(tiny_llm):
    messages = [{"role": "system", "content": "Plan a chain of queries."},
                {"role": "user", "content": "Where was the director of Jaws born?"}]
    c = tiny_llm.chat(messages, GenerationParams(max_tokens=120, grammar=COQ_GRAMMAR))
    assert c.finish_reason == "stop"
    assert re.fullmatch(r"(\[Query [1-3]\]: [A-Za-z ]{2,12}\?\n){1,3}", c.text), c.text


def test_streamed_pieces_add_up_to_the_text(tiny_llm):
    pieces = []
    c = tiny_llm.complete("Stream this", GenerationParams(max_tokens=40, grammar=QUERY_GRAMMAR),
                          on_token=pieces.append)
    assert len(pieces) > 3
    assert "".join(pieces) == c.text


def test_multibyte_text_is_decoded_across_byte_tokens(tiny_llm):
    pieces = []
    grammar = 'root ::= "héllo wörld ✓"'
    c = tiny_llm.complete("x", GenerationParams(max_tokens=40, grammar=grammar),
                          on_token=pieces.append)
    assert c.text == "héllo wörld ✓"
    assert "".join(pieces) == c.text
    assert all("\ufffd" not in p for p in pieces)


def test_stop_sequence_cuts_text_and_is_never_streamed(tiny_llm):
    pieces = []
    grammar = 'root ::= "abc STOP def"'
    c = tiny_llm.complete("x", GenerationParams(max_tokens=40, grammar=grammar, stop=("STOP",)),
                          on_token=pieces.append)
    assert c.text == "abc "
    assert c.finish_reason == "stop"
    assert "".join(pieces) == "abc "


def test_max_tokens_gives_length(tiny_llm):
    c = tiny_llm.complete("Once upon a time", GenerationParams(max_tokens=7))
    assert c.usage.completion_tokens == 7
    assert c.finish_reason == "length"


def test_greedy_is_deterministic_and_seed_controls_sampling(tiny_llm):
    greedy = GenerationParams(max_tokens=24)
    assert tiny_llm.complete("Seed test", greedy).text == tiny_llm.complete("Seed test", greedy).text
    hot = dict(max_tokens=40, temperature=1.5)
    a = tiny_llm.complete("Seed test", GenerationParams(seed=1, **hot)).text
    b = tiny_llm.complete("Seed test", GenerationParams(seed=1, **hot)).text
    c = tiny_llm.complete("Seed test", GenerationParams(seed=2, **hot)).text
    assert a == b
    assert a != c


def test_logprobs_are_one_per_token_and_greedy_picks_the_most_likely(tiny_llm):
    import math

    c = tiny_llm.complete("Log probs", GenerationParams(max_tokens=10, logprobs=True))
    assert len(c.token_logprobs) == c.usage.completion_tokens == 10
    # The greedy token is the argmax, so it is at least as likely as the uniform average.
    n_vocab = tiny_llm._n_vocab
    assert all(-math.log(n_vocab) <= lp <= 0 for lp in c.token_logprobs)
    assert tiny_llm.complete("Log probs", GenerationParams(max_tokens=10)).token_logprobs == ()


def test_cancel_from_another_thread_stops_between_tokens(tiny_llm):
    cancel = CancelToken()
    cancel_sent = threading.Event()
    pieces = []

    def on_token(piece):
        pieces.append(piece)
        if len(pieces) == 3:
            cancel_sent.wait()  # hold the worker until the other thread has cancelled

    result = {}
    worker = threading.Thread(target=lambda: result.setdefault("c", tiny_llm.complete(
        "Cancel me", GenerationParams(max_tokens=1000, grammar='root ::= [a-z]+'),
        on_token=on_token, cancel=cancel)))
    worker.start()
    while len(pieces) < 3 and worker.is_alive():
        threading.Event().wait(0.001)
    cancel.cancel()
    cancel_sent.set()
    worker.join()
    c = result["c"]
    assert c.finish_reason == "cancelled"
    assert 3 <= c.usage.completion_tokens < 1000
    assert c.text == "".join(pieces)
    # The model is still usable afterwards.
    assert tiny_llm.complete("again", GenerationParams(max_tokens=3)).usage.completion_tokens == 3


def test_cancel_before_start_evaluates_nothing(tiny_llm):
    cancel = CancelToken()
    cancel.cancel()
    c = tiny_llm.complete("A prompt never evaluated at all", cancel=cancel)
    assert c.finish_reason == "cancelled"
    assert c.usage.prompt_tokens_evaluated == 0 and c.usage.completion_tokens == 0


def test_concurrent_calls_are_serialised_and_correct(tiny_llm):
    params = GenerationParams(max_tokens=16)
    expected = {p: tiny_llm.complete(p, params).text for p in ("first prompt", "second prompt")}
    got = {}
    threads = [threading.Thread(target=lambda p=p: got.__setitem__(p, tiny_llm.complete(p, params).text))
               for p in expected for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == expected


def test_invalid_grammar_is_a_clear_error_and_the_model_survives(tiny_llm):
    with pytest.raises(SearchainError, match="grammar"):
        tiny_llm.complete("x", GenerationParams(grammar='root ::= "unclosed'))
    with pytest.raises(SearchainError, match="grammar"):
        tiny_llm.complete("x", GenerationParams(grammar='notroot ::= "a"'))
    assert tiny_llm.complete("x", GenerationParams(max_tokens=2)).usage.completion_tokens == 2


def test_bad_messages_and_empty_prompt_are_clear_errors(tiny_llm):
    with pytest.raises(ModelError, match="at least one message"):
        tiny_llm.chat([])
    with pytest.raises(ModelError, match="Message 0"):
        tiny_llm.chat([{"role": "wizard", "content": "hi"}])
    with pytest.raises(ModelError, match="empty"):
        tiny_llm.complete("")


def test_gguf_without_chat_template_gets_plain_prompts_with_a_warning(tmp_path, tiny_llm_settings):
    from searchain.llm.llama.llama_cpp_backend import LlamaCppLLM
    from searchain.llm.fakes.testmodel import write_test_gguf

    path = write_test_gguf(tmp_path / "bare.gguf", chat_template=None)
    llm = LlamaCppLLM(tiny_llm_settings, path)
    try:
        assert "no chat template" in llm.warnings[0].message
        # No ChatML: a base model never saw those markers and would echo them (issue #23).
        assert llm.render_chat([{"role": "user", "content": "hi"}]) == "hi\n"
        c = llm.chat([{"role": "user", "content": "hi"}], GenerationParams(
            max_tokens=20, grammar=QUERY_GRAMMAR))
        assert c.text.startswith("[Query 1]: ")
    finally:
        llm.close()


def test_template_that_rejects_the_messages_is_a_clear_error(tmp_path, tiny_llm_settings):
    from searchain.llm.llama.llama_cpp_backend import LlamaCppLLM
    from searchain.llm.fakes.testmodel import write_test_gguf

    strict = ("{% if messages[0]['role'] != 'user' %}"
              "{{ raise_exception('Conversation must start with the user') }}{% endif %}"
              "{% for m in messages %}{{ m['role'] + ': ' + m['content'] + '\n' }}{% endfor %}")
    llm = LlamaCppLLM(tiny_llm_settings, write_test_gguf(tmp_path / "s.gguf", chat_template=strict))
    try:
        with pytest.raises(ModelError, match="must start with the user"):
            llm.chat([{"role": "assistant", "content": "hello"}])
        assert llm.render_chat([{"role": "user", "content": "q"}]) == "user: q\n"
    finally:
        llm.close()
