"""A model's warning (here: a GGUF without a chat template) reaches the window, not only a log."""

import pytest

from desktop.context import AppContext
from desktop.main_window import MainWindow
from searchain.config import Settings

pytestmark = pytest.mark.slow  # a real llama.cpp model and a real index


def test_a_base_model_without_chat_template_is_named_above_the_chat(qtbot, demo_home, tmp_path):
    from searchain.llm.fakes.testmodel import write_test_gguf

    settings = Settings.load(demo_home)
    settings.llm.model_path = str(write_test_gguf(tmp_path / "gemma-base.gguf", chat_template=None))
    settings.llm.n_ctx, settings.llm.n_threads, settings.llm.n_gpu_layers = 2048, 2, 0
    settings.llm.max_tokens = 24  # the random-weight model never stops on its own
    settings.reasoning.mode = "direct"
    window = MainWindow(AppContext(demo_home, settings))
    qtbot.addWidget(window)
    window.show()
    try:
        assert window.answers.ask("Where is Kestrel Bay?")
        qtbot.waitUntil(lambda: not window.answers.busy, timeout=300_000)
        assert "LLMWarning" in window.answers.events_seen
        assert window.message_bar.isVisible()
        assert "no chat template" in window.message_bar.message.text()
        assert "chat template" in window.message_bar.hint.text()
    finally:
        window.close()
