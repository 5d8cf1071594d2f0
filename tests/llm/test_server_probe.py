"""*Test connection*: what a server can do for SearChain, found by asking it; and where it cannot
constrain output with a grammar, the loop still answers (prompting plus the parser)."""

import pytest

from searchain.config import LLMSettings, ReasoningSettings
from searchain.llm.loader import load_llm
from searchain.llm.server.server_probe import CAPABILITIES, list_models, probe_server
from searchain.reasoning.engine import SearChainEngine
from tests.fixtures.reasoning import PAPER_TRACING, Q1, Q2, Q3, QUESTION, chain
from tests.fixtures.servers import StubServer, chat_reply, models_reply

CHAIN = chain((Q1, "Kevin Drew"), (Q2, "Toronto"), (Q3, "Toronto Coach Terminal"))


@pytest.mark.slow
def test_llama_cpp_server_does_everything(llama_server, tiny_gguf):
    report = probe_server(llama_server.url, timeout=60)
    assert report.model == str(tiny_gguf) and report.models == (str(tiny_gguf),)
    assert report.family == "llama.cpp"
    assert [c.name for c in report.capabilities] == list(CAPABILITIES)
    assert all(c.works for c in report.capabilities), report.lines()
    assert report.grammar_setting == "on" and report.lost() == []
    assert report.lines()[1:] == [line for line in report.lines()[1:] if ": works" in line]
    assert list_models(llama_server.url) == [str(tiny_gguf)]


@pytest.fixture
def plain_server():
    """Ollama-like: lists its models, answers chats in text, and ignores grammars, schemas and
    log-probabilities (fields it does not know)."""
    def handler(method, path, body):
        if path.endswith("/v1/models"):
            return 200, models_reply("llama3.2:3b", "qwen3:8b")
        if path == "/api/version":
            return 200, {"version": "0.12.3"}
        return 200, chat_reply(CHAIN)

    server = StubServer(handler)
    yield server
    server.close()


def test_a_server_without_grammars_is_reported_with_what_is_lost(plain_server):
    report = probe_server(plain_server.url, model="qwen3:8b")
    assert report.family == "ollama" and report.models == ("llama3.2:3b", "qwen3:8b")
    works = {c.name: c.works for c in report.capabilities}
    assert works == {"chat": True, "streaming": False, "grammar": False, "json_schema": False,
                     "logprobs": False}
    assert report.grammar_setting == "off"
    lost = " ".join(report.lost())
    assert "prompting alone" in lost and "tolerant parser" in lost and "how sure" in lost
    assert "Grammar constraints (GBNF): no (the server ignores llama.cpp's grammar field)" in report.lines()
    # A server that ignores "stream" answers with one JSON body: a clear "no", and still an answer.
    assert next(c.detail for c in report.capabilities if c.name == "streaming") == \
        "the server sends each reply whole"


def test_the_loop_answers_through_a_server_that_ignores_grammars(plain_server, retriever, reader):
    llm = load_llm(LLMSettings(backend="openai", server_url=plain_server.url, server_model="qwen3:8b"))
    assert llm.supports_grammar is False  # found out with one tiny request (server_grammar auto)
    engine = SearChainEngine(llm, retriever, reader, settings=ReasoningSettings(**PAPER_TRACING),
                             use_grammar=True)
    result = engine.answer(QUESTION)
    assert [n.query for n in result.path] == [Q1, Q2, Q3]
    assert "Toronto Coach Terminal" in result.final_content
    chats = plain_server.bodies("/chat/completions")
    probe, asked = chats[0], chats[1:]
    assert probe["grammar"]  # the one check
    assert asked and all("grammar" not in body for body in asked)
    assert all(body.get("stop") for body in asked)  # prompting: the chain's own stops instead
    assert all(body.get("think") is False for body in asked)  # qwen3 on Ollama: thinking off


def test_models_server_use_saves_what_it_found(plain_server, home, capsys):
    import json

    from searchain.cli.main import main
    from searchain.config import Settings

    code = main(["--home", str(home.config_dir.parent), "models", "server", plain_server.url,
                 "--model", "qwen3:8b", "--key", "sk-cli-5", "--use", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["used"] and out["grammar_setting"] == "off" and out["lost"]
    llm = Settings.load(home).llm
    assert (llm.backend, llm.server_url, llm.server_model, llm.server_key, llm.server_family,
            llm.server_grammar) == ("openai", plain_server.url, "qwen3:8b", "sk-cli-5", "ollama", "off")
    headers = [h for _m, _p, _b, h in plain_server.requests]
    assert all(h.get("Authorization") == "Bearer sk-cli-5" for h in headers)
