"""`searchain ask --server URL --json` (#35): the whole SearChain loop through the real
``llama_cpp.server`` serving the tiny GGUF gives the JSON a local run of the same file gives,
and a server that dies or refuses the key is one clear line, with the key never printed."""

import json

import pytest

from searchain.cli.main import main
from searchain.config import Settings
from tests.fixtures.servers import LlamaServer, kill_after_first_piece
from tests.reasoning.test_ask_e2e import DEMO_GRAMMAR

pytestmark = pytest.mark.slow  # a real model, twice, over the demo corpus
QUESTION = "Where was the founder of the observatory born?"


@pytest.fixture
def ask_home(home):
    settings = Settings()
    settings.retrieval.retriever = "bm25"  # no embedding index to build
    settings.reasoning.reader = "llm"  # the model reads passages too: log-probabilities over HTTP
    settings.reasoning.r_max = 2
    settings.llm.n_ctx, settings.llm.n_gpu_layers, settings.llm.n_threads = 4096, 0, 1
    settings.llm.max_tokens = 200
    settings.save(home)
    (home.config_dir / "demo.gbnf").write_text(DEMO_GRAMMAR, encoding="utf-8")
    return home


def _ask(home, capsys, *extra) -> tuple[int, dict | None, str]:
    code = main(["--home", str(home.config_dir.parent), "ask", QUESTION, "--corpus", "demo", "--json",
                 "--grammar", str(home.config_dir / "demo.gbnf"), *extra])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if code == 0 else None, captured.err


def test_ask_through_a_server_gives_the_local_json(ask_home, tiny_gguf, tmp_path, capsys):
    code, local, err = _ask(ask_home, capsys, "--model", str(tiny_gguf))
    assert code == 0, err
    with LlamaServer(tiny_gguf, log_dir=tmp_path, n_ctx=4096) as server:
        code, remote, err = _ask(ask_home, capsys, "--server", server.url, "--server-model", str(tiny_gguf))
    assert code == 0, err
    assert "starter" not in err  # no model notice: the server answers
    assert set(remote) == set(local)
    for key in ("question", "mode", "stop_reason", "rounds", "references"):
        assert remote[key] == local[key], key
    assert remote["nodes"] and all(n["passage_id"] for n in remote["nodes"])
    for here, there in zip(local["nodes"], remote["nodes"], strict=True):
        # Greedy decoding over the same prompts: the same chain, the same readings of passages.
        assert {k: v for k, v in there.items() if k != "confidence"} == \
            {k: v for k, v in here.items() if k != "confidence"}
        assert there["confidence"] == pytest.approx(here["confidence"], rel=1e-4)
    # The free-text final answer of a random-weight model is bytes that are not all UTF-8, which
    # the two decode differently; the benchmark (`bench server`) compares real answers whole.
    assert remote["final_content"] and remote["prompt_tokens"] > 0


def test_ask_through_a_dead_server_or_with_a_wrong_key(ask_home, tiny_gguf, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SEARCHAIN_LLM_API_KEY", raising=False)
    with LlamaServer(tiny_gguf, "--api_key", "sk-right-1", log_dir=tmp_path) as server:
        code, _out, err = _ask(ask_home, capsys, "--server", server.url, "--server-key", "sk-wrong-2")
        assert code == 1 and "refused the API key" in err and "sk-wrong-2" not in err
        url = server.url
    code, _out, err = _ask(ask_home, capsys, "--server", url)
    assert code == 1 and err.startswith("error: Cannot reach the LLM server") and "Traceback" not in err
    logs = ask_home.log_dir
    assert not logs.exists() or all("sk-wrong-2" not in p.read_text() for p in logs.rglob("*") if p.is_file())


def test_ask_in_a_chat_through_a_server_killed_mid_answer_keeps_the_partial_answer(
        ask_home, tiny_gguf, tmp_path, capsys, monkeypatch):
    from searchain.store import ConversationStore

    settings = Settings.load(ask_home)
    settings.llm.max_tokens = 4000  # far more than can stream before the kill
    settings.save(ask_home)
    with ConversationStore.open(ask_home.conversations_db) as store:
        cid = store.create_conversation("Observatory")
    with LlamaServer(tiny_gguf, log_dir=tmp_path, n_ctx=8192) as server:
        before_kill = kill_after_first_piece(monkeypatch, server)  # SIGKILL, as a crash ends it
        code, _out, err = _ask(ask_home, capsys, "--server", server.url, "--chat", str(cid))
    assert code == 1 and "stopped in the middle of the answer" in err and "Traceback" not in err
    with ConversationStore.open(ask_home.conversations_db) as store:
        question, answer = store.get_conversation(cid).messages[-2:]
    assert question.content == QUESTION
    assert answer.state == "failed"
    assert "stopped in the middle of the answer" in answer.error and "still runs" in answer.error
    assert before_kill and answer.content.startswith("".join(before_kill))  # the partial answer kept
