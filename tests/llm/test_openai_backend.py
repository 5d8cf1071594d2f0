"""The OpenAI-compatible backend against the real ``llama_cpp.server`` on loopback."""

import re

import pytest

from searchain.config import LLMSettings
from searchain.errors import ConfigError, ModelError
from searchain.events import CancelToken
from searchain.llm.base import LLM, GenerationParams
from searchain.llm.loader import load_llm
from searchain.llm.server.openai_backend import OpenAICompatibleLLM
from tests.fixtures.servers import free_port

QUERY_GRAMMAR = r'root ::= "[Query 1]: " [a-z ]{3,20} "\n"'


@pytest.fixture(scope="module")
def server_url(llama_server):
    return llama_server.url.removesuffix("/v1")  # the /v1 suffix is optional


@pytest.fixture(scope="module")
def remote(server_url):
    return OpenAICompatibleLLM(server_url, timeout=60)


pytestmark = pytest.mark.slow  # starts a server process (a few seconds)


def test_protocol_and_model_discovery(remote, tiny_gguf):
    assert isinstance(remote, LLM)
    assert remote.model.endswith("tiny.gguf")
    assert remote.supports_grammar


def test_completion_with_grammar_and_server_usage(remote):
    c = remote.complete("Plan:", GenerationParams(max_tokens=40, grammar=QUERY_GRAMMAR))
    assert re.fullmatch(r"\[Query 1\]: [a-z ]{3,20}\n", c.text)
    assert c.finish_reason == "stop"
    assert c.usage.prompt_tokens > 0 and c.usage.completion_tokens >= len(c.text) // 2


def test_streaming_pieces_and_stop(remote):
    pieces = []
    c = remote.complete("Plan:", GenerationParams(max_tokens=40, grammar=QUERY_GRAMMAR),
                        on_token=pieces.append)
    assert len(pieces) > 3 and "".join(pieces) == c.text
    assert re.fullmatch(r"\[Query 1\]: [a-z ]{3,20}\n", c.text)
    assert c.usage.completion_tokens == len(pieces)
    pieces.clear()
    c = remote.chat([{"role": "user", "content": "hi"}],
                    GenerationParams(max_tokens=40, grammar='root ::= "abc STOP def"',
                                     stop=("STOP",)), on_token=pieces.append)
    assert c.text == "abc " and "".join(pieces) == "abc "


def test_max_tokens_gives_length(remote):
    c = remote.complete("Once", GenerationParams(max_tokens=5))
    assert c.finish_reason == "length"
    assert c.usage.completion_tokens == 5


def test_cancel_mid_stream(remote):
    cancel = CancelToken()
    pieces = []

    def on_token(piece):
        pieces.append(piece)
        if len(pieces) == 3:
            cancel.cancel()

    c = remote.complete("Go on", GenerationParams(max_tokens=500, grammar="root ::= [a-z]+"),
                        on_token=on_token, cancel=cancel)
    assert c.finish_reason == "cancelled"
    assert len(pieces) == 3 and c.text == "".join(pieces)
    # The server is still serving.
    assert remote.complete("x", GenerationParams(max_tokens=2)).usage.completion_tokens == 2


def test_load_llm_picks_the_openai_backend(server_url):
    llm = load_llm(LLMSettings(backend="openai", server_url=server_url + "/v1"))
    assert isinstance(llm, OpenAICompatibleLLM) and llm.warnings == []


def test_unreachable_server_and_bad_url_are_clear_errors():
    port = free_port()  # nothing listens there
    with pytest.raises(ModelError, match="Cannot reach the LLM server"):
        OpenAICompatibleLLM(f"http://127.0.0.1:{port}", model="m").complete("x")
    with pytest.raises(ModelError, match="not an http"):
        OpenAICompatibleLLM("ftp://example.org", model="m")
    with pytest.raises(ConfigError, match="server URL"):
        load_llm(LLMSettings(backend="openai"))
    with pytest.raises(ConfigError, match="Unknown LLM backend"):
        load_llm(LLMSettings(backend="gpt5"))


def test_http_errors_are_reported(remote):
    with pytest.raises(ModelError, match=r"answered [45]\d\d .*max_tokens"):
        remote.complete("x", GenerationParams(max_tokens=-3))
