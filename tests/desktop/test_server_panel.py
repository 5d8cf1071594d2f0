"""The model dialog's *Use a server* tab (#35): presets, the models a server lists, *Test
connection* saying what works and what is lost, and *Use this server* saving it; every request
made off the UI thread."""

import threading

import pytest
from PySide6.QtWidgets import QLineEdit

from desktop.context import AppContext
from desktop.views.model_choice.dialog import ModelDialog
from desktop.views.model_choice.server_panel import PRESETS
from desktop.workers import JobRunner
from searchain.config import Settings
from searchain.llm.server.openai_backend import OpenAICompatibleLLM
from tests.fixtures.servers import StubServer, chat_reply, models_reply


@pytest.fixture
def requests_threads(monkeypatch):
    """The thread of every HTTP request the backend opens."""
    threads = []
    opened = OpenAICompatibleLLM._open

    def recording(self, *args, **kwargs):
        threads.append(threading.current_thread())
        return opened(self, *args, **kwargs)

    monkeypatch.setattr(OpenAICompatibleLLM, "_open", recording)
    return threads


@pytest.fixture
def dialog(qtbot, home):
    dialog = ModelDialog(AppContext(home, Settings.load(home)), JobRunner())
    qtbot.addWidget(dialog)
    dialog.show_servers()
    return dialog


def test_presets_fill_in_each_programs_default_address(dialog, qtbot):
    panel = dialog.server
    assert dialog.sources.tabText(dialog.sources.currentIndex()) == "Use a server"
    assert [(label, url) for label, url, _f in PRESETS] == [
        ("Ollama", "http://127.0.0.1:11434/v1"), ("LM Studio", "http://127.0.0.1:1234/v1"),
        ("llama-server", "http://127.0.0.1:8080/v1")]
    with qtbot.waitSignal(panel.models_listed, timeout=60_000):  # listed, or said why not
        panel.findChild(object, "preset_lmstudio").click()
    assert panel.url.text() == "http://127.0.0.1:1234/v1" and panel.family == "lmstudio"
    assert panel.key.echoMode() == QLineEdit.EchoMode.Password


@pytest.mark.slow
def test_a_llama_cpp_server_is_listed_tested_and_used(dialog, qtbot, llama_server, tiny_gguf, requests_threads):
    panel = dialog.server
    panel.url.setText(llama_server.url)
    with qtbot.waitSignal(panel.models_listed, timeout=60_000) as listed:
        panel.list_button.click()
    assert listed.args == [1] and panel.models.currentText() == str(tiny_gguf)
    with qtbot.waitSignal(panel.probe_finished, timeout=120_000) as tested:
        panel.test_button.click()
    assert tested.args == [True]
    report = panel.result.text()
    for line in ("Chat: works", "Streaming: works", "Grammar constraints (GBNF): works",
                 "JSON-schema constraints: works", "Log-probabilities: works"):
        assert line in report
    assert "What SearChain does without" not in report
    assert requests_threads and threading.main_thread() not in requests_threads
    with qtbot.waitSignal(dialog.server_chosen) as chosen:
        panel.use_button.click()
    port = llama_server.url.split(":")[2].split("/")[0]
    assert chosen.args == [f"{tiny_gguf} @ 127.0.0.1:{port}"]
    llm = dialog.ctx.settings.llm
    assert (llm.backend, llm.server_url, llm.server_model, llm.server_grammar, llm.server_family) == \
        ("openai", llama_server.url, str(tiny_gguf), "on", "llama.cpp")


def test_a_server_without_grammars_says_what_is_lost(dialog, qtbot, requests_threads):
    def handler(method, path, body):
        if path.endswith("/v1/models"):
            return 200, models_reply("llama3.2:3b")
        if path == "/api/version":
            return 200, {"version": "0.12.3"}
        return 200, chat_reply("Hello there")

    server = StubServer(handler)
    try:
        panel = dialog.server
        panel.url.setText(server.url)
        panel.key.setText("sk-panel-8")
        with qtbot.waitSignal(panel.probe_finished, timeout=60_000) as tested:
            panel.test_button.click()
        assert tested.args == [True]
        report = panel.result.text()
        assert "Grammar constraints (GBNF): no" in report and "(ollama)" in report
        assert "What SearChain does without what is missing:" in report and "prompting alone" in report
        assert "sk-panel-8" not in report
        assert threading.main_thread() not in requests_threads
        assert panel.use_server()
        llm = dialog.ctx.settings.llm
        assert (llm.server_model, llm.server_grammar, llm.server_family, llm.server_key) == \
            ("llama3.2:3b", "off", "ollama", "sk-panel-8")
    finally:
        server.close()


def test_an_unreachable_server_is_a_message_not_a_hang(dialog, qtbot):
    from tests.fixtures.servers import free_port

    panel = dialog.server
    panel.url.setText(f"http://127.0.0.1:{free_port()}/v1")
    with qtbot.waitSignal(panel.probe_finished, timeout=60_000) as tested:
        panel.test_button.click()
    assert tested.args == [False] and "Cannot reach the LLM server" in panel.result.text()
    assert panel.test_button.isEnabled()


def test_the_settings_say_which_server_answers_and_what_is_lost(qtbot, home, tiny_gguf):
    from desktop.main_window import MainWindow

    settings = Settings.load(home)
    llm = settings.llm
    llm.backend, llm.server_url, llm.server_model, llm.server_grammar = \
        "openai", "http://127.0.0.1:11434/v1", "qwen3:8b", "off"
    window = MainWindow(AppContext(home, settings))
    qtbot.addWidget(window)
    window.open_settings()
    note = window.settings_dialog.server_note
    assert not note.isHidden()
    assert note.text().startswith("Answers come from qwen3:8b @ 127.0.0.1:11434")
    assert "Grammar constraints: off" in note.text() and "tolerant parser" in note.text()
    # A GGUF chosen in the settings answers instead of the server.
    window.settings_dialog.model_path.setText(str(tiny_gguf))
    window.settings_dialog.apply()
    assert llm.backend == "llama_cpp" and note.isHidden()
    assert window.model_label.text() == f"Model: {tiny_gguf.name}"
