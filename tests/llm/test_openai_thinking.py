"""Thinking models through servers: each family gets its own switch for thinking off (llama.cpp
and vLLM templates take ``chat_template_kwargs``, Ollama ``think`` / ``reasoning_effort``), other
models get nothing extra (a hosted API may refuse a field it does not know), and a think block a
server sends anyway is stripped before the loop reads the reply."""

import pytest

from searchain.llm.base import GenerationParams
from searchain.llm.server.openai_backend import OpenAICompatibleLLM
from searchain.reasoning.parts import Generator
from tests.fixtures.servers import StubServer, chat_reply, models_reply

ASK = [{"role": "user", "content": "Capital of France?"}]


@pytest.fixture
def stub():
    servers = []

    def start(models, *, owned_by="library", ollama=False, reply="Paris"):
        def handler(method, path, body):
            if path.endswith("/v1/models"):
                return 200, models_reply(*models, owned_by=owned_by)
            if path == "/api/version":
                return (200, {"version": "0.12.3"}) if ollama else (404, {"error": "not found"})
            return 200, chat_reply(reply)

        server = StubServer(handler)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


@pytest.mark.parametrize("owned_by, ollama, family, sent", [
    ("llamacpp", False, "llama.cpp", {"chat_template_kwargs": {"enable_thinking": False}}),
    ("vllm", False, "vllm", {"chat_template_kwargs": {"enable_thinking": False}}),
    ("library", True, "ollama", {"think": False, "reasoning_effort": "none"}),
])
def test_each_family_gets_its_switch_for_a_thinking_model(stub, owned_by, ollama, family, sent):
    server = stub(["qwen3:8b"], owned_by=owned_by, ollama=ollama)
    llm = OpenAICompatibleLLM(server.url, model="qwen3:8b", grammar_field=None)
    c = llm.chat(ASK, GenerationParams(max_tokens=4))
    assert c.text == "Paris" and c.usage.prompt_tokens == 3
    assert llm.family == family
    body = server.bodies("/chat/completions")[-1]
    switches = {k: body[k] for k in ("chat_template_kwargs", "think", "reasoning_effort") if k in body}
    assert switches == sent


def test_a_model_that_does_not_think_gets_no_switch(stub):
    server = stub(["qwen2.5-7b-instruct"], ollama=True)
    llm = OpenAICompatibleLLM(server.url, model="qwen2.5-7b-instruct", grammar_field=None)
    llm.chat(ASK, GenerationParams(max_tokens=4))
    body = server.bodies("/chat/completions")[-1]
    assert not {"chat_template_kwargs", "think", "reasoning_effort"} & set(body)


def test_a_configured_family_is_not_asked_for(stub):
    server = stub(["Qwen3-8B-Q4_K_M.gguf"])
    llm = OpenAICompatibleLLM(server.url, model="Qwen3-8B-Q4_K_M.gguf", grammar_field=None,
                              family="ollama")
    llm.chat(ASK, GenerationParams(max_tokens=4))
    assert not [p for _m, p, _b, _h in server.requests if p == "/api/version"]
    assert server.bodies("/chat/completions")[-1]["think"] is False


def test_a_think_block_sent_anyway_is_stripped_before_the_loop_reads_it(stub):
    # A server that ignores every switch (or an older one): the output stripping is the fallback.
    server = stub(["qwen3:8b"], reply="<think>\nThe user asks about France.\n</think>\n\nParis")
    llm = OpenAICompatibleLLM(server.url, model="qwen3:8b", grammar_field=None)
    generator = Generator(llm, GenerationParams(max_tokens=64), use_grammar=True, on_event=None,
                          cancel=None)
    assert generator.chat(ASK, "answer", grammar=None).text == "Paris"
