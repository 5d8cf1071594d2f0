"""The app's answer flow through a server (#35), the real ``llama_cpp.server`` on loopback: an
answer whose footer names the server model, and a server killed in the middle of an answer, which
is a clear message with the partial answer kept on screen and in the store."""

import pytest

from desktop.context import AppContext
from desktop.main_window import MainWindow
from searchain.config import Settings
from tests.fixtures.servers import LlamaServer, kill_after_first_piece

pytestmark = pytest.mark.slow  # a server process and a real (tiny) model


def _window(qtbot, home, url, **reasoning):
    settings = Settings.load(home)
    llm = settings.llm
    llm.backend, llm.server_url, llm.server_timeout = "openai", url, 60
    llm.max_tokens = 48  # the random-weight model never stops on its own
    settings.retrieval.retriever = "bm25"
    for key, value in reasoning.items():
        setattr(settings.reasoning, key, value)
    window = MainWindow(AppContext(home, settings))
    qtbot.addWidget(window)
    window.show()
    return window


def test_an_answer_through_a_server_names_the_server_model(qtbot, demo_home, llama_server, tiny_gguf):
    window = _window(qtbot, demo_home, llama_server.url, r_max=1, reader="llm")
    port = llama_server.url.split(":")[2].split("/")[0]
    label = f"the server's first model @ 127.0.0.1:{port}"
    assert window.model_label.text() == f"Model: first listed @ 127.0.0.1:{port} (server)"
    assert window.answers.ask("Where is Kestrel Bay?")
    qtbot.waitUntil(lambda: not window.answers.busy, timeout=300_000)
    entry = window.chat.entries[-1]
    assert entry.status == "done", entry.error
    assert label in window.chat.transcript.toPlainText()  # the footer under the answer
    store = window.ctx.workspace().conversations()
    answer = store.get_conversation(window.conversations.current_id).messages[-1]
    assert answer.state == "complete" and answer.run.model == label
    assert window.ctx.workspace().llm().name == f"{tiny_gguf} @ 127.0.0.1:{port}"


def test_a_server_killed_mid_answer_keeps_the_partial_answer(qtbot, demo_home, tiny_gguf, tmp_path,
                                                             monkeypatch):
    with LlamaServer(tiny_gguf, log_dir=tmp_path, n_ctx=8192) as server:
        # SearChain's chain is held to its grammar, so its first piece is whole text ("[Query 1]:
        # ..."), which the server sends at once (it holds back bytes that end mid-character).
        window = _window(qtbot, demo_home, server.url, r_max=1)
        window.ctx.settings.llm.max_tokens = 4000  # far more than can stream before the kill
        before_kill = kill_after_first_piece(monkeypatch, server)
        assert window.answers.ask("Tell me everything about Kestrel Bay.")
        qtbot.waitUntil(lambda: not window.answers.busy, timeout=300_000)
    entry = window.chat.entries[-1]
    assert entry.status == "failed"
    transcript = window.chat.transcript.toPlainText()
    assert "stopped in the middle of the answer" in transcript and "still runs" in transcript
    assert before_kill and entry.text.startswith("".join(before_kill))  # kept on screen
    assert entry.text in transcript
    assert window.message_bar.isVisible()
    store = window.ctx.workspace().conversations()
    question, answer = store.get_conversation(window.conversations.current_id).messages[-2:]
    assert question.content == "Tell me everything about Kestrel Bay."
    assert answer.state == "failed" and "stopped in the middle" in answer.error
    assert answer.content == entry.text  # the partial answer is kept in the store


def test_the_servers_faults_in_the_app_are_clear_and_lose_nothing(qtbot, demo_home, tiny_gguf, tmp_path,
                                                                   monkeypatch):
    """A rejected key, a model the server does not have and a server that stops answering, each
    against the real server through the app's answer flow: a clear message above the chat and on
    the failed answer, and the question kept in the conversation with the answer's error."""
    import os
    import signal

    monkeypatch.delenv("SEARCHAIN_LLM_API_KEY", raising=False)
    with LlamaServer(tiny_gguf, "--api_key", "sk-right-3", log_dir=tmp_path) as server:
        window = _window(qtbot, demo_home, server.url, r_max=1)
        llm = window.ctx.settings.llm
        faults = [("sk-wrong-4", str(tiny_gguf), 60, "refused the API key"),
                  ("sk-right-3", "qwen3:8b", 60, "has no model named 'qwen3:8b'"),
                  ("sk-right-3", str(tiny_gguf), 1, "sent nothing for 1 s")]
        for n, (key, model, timeout, said) in enumerate(faults):
            llm.server_key, llm.server_model, llm.server_timeout = key, model, timeout
            window.ctx.settings_changed(model_changed=True)
            if timeout == 1:
                os.kill(server.proc.pid, signal.SIGSTOP)  # frozen: takes the request, says nothing
            try:
                question = f"Where is Kestrel Bay? ({n})"
                assert window.answers.ask(question)
                qtbot.waitUntil(lambda: not window.answers.busy, timeout=120_000)
            finally:
                os.kill(server.proc.pid, signal.SIGCONT)
            entry = window.chat.entries[-1]
            assert entry.status == "failed" and said in window.chat.transcript.toPlainText()
            assert window.message_bar.isVisible() and said in window.message_bar.message.text()
            assert "Traceback" not in window.chat.transcript.toPlainText()
            store = window.ctx.workspace().conversations()
            asked, answer = store.get_conversation(window.conversations.current_id).messages[-2:]
            assert asked.content == question and answer.state == "failed" and said in answer.error
            assert "sk-wrong-4" not in answer.error + window.message_bar.message.text()
