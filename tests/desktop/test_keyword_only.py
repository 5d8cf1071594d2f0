"""A corpus whose vector index is not built yet answers by keywords, and the window says so."""

import pytest

from desktop.context import AppContext
from desktop.main_window import MainWindow
from searchain.config import Settings
from searchain.corpus.manager import CorpusManager
from tests.fixtures.index import MINI_CORPUS, write_mini_corpus

pytestmark = pytest.mark.slow  # a real llama.cpp model


def test_asking_over_a_corpus_without_its_vector_index_says_keywords_only(qtbot, demo_home, tmp_path):
    from searchain.llm.fakes.testmodel import write_test_gguf

    settings = Settings.load(demo_home)
    CorpusManager(demo_home, settings).add(MINI_CORPUS, write_mini_corpus(tmp_path / "m.jsonl"), "jsonl")
    settings.active_corpus = MINI_CORPUS
    settings.llm.model_path = str(write_test_gguf(tmp_path / "tiny.gguf"))
    settings.llm.n_ctx, settings.llm.n_threads, settings.llm.n_gpu_layers = 2048, 2, 0
    settings.llm.max_tokens = 16  # the random-weight model never stops on its own
    settings.reasoning.mode = "rag"
    window = MainWindow(AppContext(demo_home, settings))
    qtbot.addWidget(window)
    window.show()
    try:
        assert window.answers.ask("What is the capital of Japan?")
        qtbot.waitUntil(lambda: not window.answers.busy, timeout=300_000)
        assert "KeywordOnly" in window.answers.events_seen
        assert window.message_bar.isVisible() and window.message_bar.kind == "info"
        assert f"Searching '{MINI_CORPUS}' by keywords only" in window.message_bar.message.text()
        assert "Update index" in window.message_bar.hint.text()
    finally:
        window.close()
