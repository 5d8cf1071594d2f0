"""The faults a server brings (#35), against the real ``llama_cpp.server`` on loopback where one
can be made to show them, else a stub: each one a clear ModelError with what to do, and the key
never in a message."""

import threading

import pytest

from searchain.config import LLMSettings
from searchain.errors import ModelError
from searchain.llm.base import GenerationParams
from searchain.llm.loader import load_llm
from searchain.llm.server.openai_backend import OpenAICompatibleLLM
from tests.fixtures.servers import LlamaServer, StubServer, kill_after_first_piece, models_reply

pytestmark = pytest.mark.slow  # starts server processes (a few seconds each)

ASK = [{"role": "user", "content": "Go on."}]
KEY = "sk-test-4c1d9e"


def test_a_server_killed_in_the_middle_of_an_answer(tiny_gguf, tmp_path, monkeypatch):
    with LlamaServer(tiny_gguf, log_dir=tmp_path, n_ctx=8192) as server:
        llm = OpenAICompatibleLLM(server.url, timeout=60)
        before_kill = kill_after_first_piece(monkeypatch, server)  # SIGKILL, as a crash ends it
        pieces = []
        with pytest.raises(ModelError) as caught:
            # Thousands of tokens to go when it dies: the reply cannot have been sent whole.
            llm.chat(ASK, GenerationParams(max_tokens=4000, grammar="root ::= [a-z]+"),
                     on_token=pieces.append)
    assert "stopped in the middle of the answer" in caught.value.message
    assert "still runs" in caught.value.hint and "kept" in caught.value.hint
    # What streamed before (and what was already on its way) is the caller's to keep.
    assert before_kill and pieces[:len(before_kill)] == before_kill
    # Asked again, the dead server is a plain "cannot reach".
    with pytest.raises(ModelError, match="Cannot reach the LLM server"):
        llm.chat(ASK, GenerationParams(max_tokens=4))


def test_a_stream_that_ends_before_any_text_says_so():
    # llama-cpp-python ends a stream with nothing (no error, no [DONE]) when the request fails
    # inside it, e.g. a prompt longer than its context window.
    def handler(method, path, body):
        if path.endswith("/models"):
            return 200, models_reply("m")
        return 200, None  # an empty body: no event, no [DONE]

    server = StubServer(handler)
    try:
        llm = OpenAICompatibleLLM(server.url, model="m", grammar_field=None)
        with pytest.raises(ModelError) as caught:
            llm.chat(ASK, GenerationParams(max_tokens=4), on_token=lambda _p: None)
        assert "closed its reply before sending any text" in caught.value.message
        assert "context window" in caught.value.hint
    finally:
        server.close()


def test_a_model_the_server_does_not_have(llama_server, tiny_gguf):
    # llama-cpp-python's server would answer with its own model: the name is checked first.
    llm = load_llm(LLMSettings(backend="openai", server_url=llama_server.url, server_model="qwen3:8b"))
    with pytest.raises(ModelError) as caught:
        llm.chat(ASK, GenerationParams(max_tokens=4))
    assert "has no model named 'qwen3:8b'" in caught.value.message
    assert str(tiny_gguf) in caught.value.message  # what it does have
    assert "--server-model" in caught.value.hint


def test_an_unknown_model_refused_by_the_server_itself():
    # Ollama and vLLM answer 404 for a model they do not have (and may list none first).
    def handler(method, path, body):
        if path.endswith("/models"):
            return 404, {"error": "not found"}
        return 404, {"error": {"message": f"model '{body['model']}' not found", "type": "not_found_error"}}

    server = StubServer(handler)
    try:
        llm = OpenAICompatibleLLM(server.url, model="llama9", grammar_field=None)
        with pytest.raises(ModelError, match="has no model named 'llama9'.*not found"):
            llm.chat(ASK, GenerationParams(max_tokens=4))
    finally:
        server.close()


def test_a_slow_server_times_out_after_the_configured_seconds():
    release = threading.Event()

    def handler(method, path, body):
        if path.endswith("/models"):
            return 200, models_reply("slow-model")
        release.wait(60)  # never answers while the client waits
        return 500, None

    server = StubServer(handler)
    try:
        llm = load_llm(LLMSettings(backend="openai", server_url=server.url, server_timeout=1,
                                   server_grammar="off"))
        for streamed in (False, True):
            with pytest.raises(ModelError) as caught:
                llm.chat(ASK, GenerationParams(max_tokens=4),
                         on_token=(lambda _piece: None) if streamed else None)
            assert "sent nothing for 1 s" in caught.value.message
            assert "llm.server_timeout" in caught.value.hint
    finally:
        release.set()
        server.close()


def test_a_real_server_that_stops_answering_times_out(llama_server, tiny_gguf):
    """The real server, frozen (SIGSTOP: a machine swapping, a debugger, a hung process): its
    port still takes the request, nothing comes back, and the configured timeout ends the wait."""
    import os
    import signal

    patient = load_llm(LLMSettings(backend="openai", server_url=llama_server.url, server_timeout=60,
                                   server_model=str(tiny_gguf)))
    assert patient.chat(ASK, GenerationParams(max_tokens=2)).text is not None  # it answers at first
    llm = load_llm(LLMSettings(backend="openai", server_url=llama_server.url, server_timeout=1,
                               server_model=str(tiny_gguf)))
    os.kill(llama_server.proc.pid, signal.SIGSTOP)
    try:
        for streamed in (False, True):
            with pytest.raises(ModelError) as caught:
                llm.chat(ASK, GenerationParams(max_tokens=4),
                         on_token=(lambda _piece: None) if streamed else None)
            assert "sent nothing for 1 s" in caught.value.message
            assert "llm.server_timeout" in caught.value.hint
    finally:
        os.kill(llama_server.proc.pid, signal.SIGCONT)
    assert patient.chat(ASK, GenerationParams(max_tokens=2)).text is not None  # and again once it wakes


def test_auth_failures_say_which_and_never_show_the_key(tiny_gguf, tmp_path, monkeypatch):
    monkeypatch.delenv("SEARCHAIN_LLM_API_KEY", raising=False)
    with LlamaServer(tiny_gguf, "--api_key", KEY, log_dir=tmp_path) as server:
        with pytest.raises(ModelError) as none:
            OpenAICompatibleLLM(server.url).chat(ASK, GenerationParams(max_tokens=4))
        assert "needs an API key (it answered 401)" in none.value.message
        wrong = "sk-wrong-77aa"
        with pytest.raises(ModelError) as refused:
            load_llm(LLMSettings(backend="openai", server_url=server.url, server_key=wrong)).chat(
                ASK, GenerationParams(max_tokens=4))
        assert "refused the API key" in refused.value.message
        assert wrong not in str(refused.value) and KEY not in str(none.value)
        # The right key, from settings or from the environment, is let in.
        llm = load_llm(LLMSettings(backend="openai", server_url=server.url, server_key=KEY))
        assert llm.chat(ASK, GenerationParams(max_tokens=4)).finish_reason in ("stop", "length")
        monkeypatch.setenv("SEARCHAIN_LLM_API_KEY", KEY)
        assert OpenAICompatibleLLM(server.url).list_models() == [str(tiny_gguf)]


def test_a_key_a_server_echoes_back_is_masked():
    def handler(method, path, body):
        return 400, {"error": {"message": f"bad request from key {KEY}"}}

    server = StubServer(handler)
    try:
        with pytest.raises(ModelError) as caught:
            OpenAICompatibleLLM(server.url, model="m", api_key=KEY).list_models()
        assert KEY not in str(caught.value) and "***" in str(caught.value)
    finally:
        server.close()
