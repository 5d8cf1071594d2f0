"""The starter's notice as a newcomer meets it (#35): shown once, above the chat, in words a
desktop user acts on, with a button that opens the model dialog and one that switches to the mode
the starter answers best with; gone once a real model or a server is chosen; an offer of the
best model found on this computer (another app's) once one is found."""

import pytest
from PySide6.QtWidgets import QLabel, QPushButton

from desktop.context import AppContext
from desktop.found_offer import look_for_found_models
from desktop.main_window import MainWindow
from searchain.config import Settings
from searchain.llm.models import starter
from tests.fixtures.discovery import tree_state


def _window(qtbot, home):
    window = MainWindow(AppContext(home, Settings.load(home)))
    qtbot.addWidget(window)
    window.show()
    return window


def _button(window, action):
    """The banner's visible button for ``action`` (replaced ones are hidden, deleted later)."""
    return next((b for b in window.message_bar.findChildren(QPushButton, f"action_{action}")
                 if b.isVisible()), None)


def _visible_texts(window) -> list[str]:
    return [label.text() for label in window.findChildren(QLabel) if label.isVisible() and label.text()]


def test_the_notice_shows_once_in_a_desktop_users_words(qtbot, home, fake_starter):
    window = _window(qtbot, home)
    window.show_starter_notice()  # what the app does after its first frame (app.start_background)
    qtbot.waitUntil(lambda: _button(window, "starter_mode") is not None)
    assert window.model_label.text() == f"Model: {starter.STARTER_LABEL} (tiny starter)"
    shown = [text for text in _visible_texts(window) if "starter model" in text]
    assert len(shown) == 1  # once: the banner above the chat, nothing again above the input
    text = window.message_bar.message.text() + " " + window.message_bar.hint.text()
    assert starter.STARTER_LABEL in text and "weak or wrong" in text
    assert "`" not in text and "searchain " not in text and ".md" not in text  # no CLI, no dev files
    assert _button(window, "catalogue").text() == "Choose a model…"
    assert _button(window, "starter_mode").text() == "Answer with Retrieve then read"


def test_the_buttons_open_the_models_and_switch_to_the_starters_mode(qtbot, home, fake_starter):
    window = _window(qtbot, home)
    window.show_starter_notice()
    qtbot.waitUntil(lambda: _button(window, "starter_mode") is not None)
    assert window.ctx.settings.reasoning.mode == "searchain"
    _button(window, "catalogue").click()
    assert window.model_dialog.isVisible() and window.model_dialog.local.rowCount() >= 0
    window.model_dialog.close()
    _button(window, "starter_mode").click()
    assert window.ctx.settings.reasoning.mode == starter.STARTER_BEST_MODE == "rag"
    assert Settings.load(home).reasoning.mode == "rag"  # saved: the next start keeps it
    assert window.chat.strategy.chosen() is None  # "as in Settings", which now says RAG
    # The notice stays (the model is still tiny), without the button it no longer needs.
    assert window.message_bar.isVisible() and "answers use Retrieve then read" in window.message_bar.hint.text()
    qtbot.waitUntil(lambda: _button(window, "catalogue") is not None)  # new buttons show when laid out
    assert _button(window, "starter_mode") is None


def test_choosing_a_real_model_or_a_server_takes_the_notice_away(qtbot, home, fake_starter, tiny_gguf):
    window = _window(qtbot, home)
    window.show_starter_notice()
    window.use_model(str(tiny_gguf))
    assert "starter" not in window.message_bar.message.text()
    assert window.model_label.text() == f"Model: {tiny_gguf.name}"
    # Back to no model, then a server: the notice goes too.
    window.ctx.settings.llm.model_path = ""
    window.update_status()
    window.show_starter_notice()
    llm = window.ctx.settings.llm
    llm.backend, llm.server_url, llm.server_model = "openai", "http://127.0.0.1:11434/v1", "qwen3:8b"
    window.use_server("qwen3:8b @ 127.0.0.1:11434")
    assert window.message_bar.message.text() == "Answers now come from qwen3:8b @ 127.0.0.1:11434."
    assert window.model_label.text() == "Model: qwen3:8b @ 127.0.0.1:11434 (server)"


def test_another_message_is_not_taken_away(qtbot, home, fake_starter, tiny_gguf):
    window = _window(qtbot, home)
    window.message_bar.show_message("The corpus could not be opened.", kind="error")
    window.ctx.settings.llm.model_path = str(tiny_gguf)
    window.update_status()
    assert window.message_bar.isVisible() and "corpus" in window.message_bar.message.text()


def test_no_notice_without_a_starter(qtbot, home, no_starter):
    window = _window(qtbot, home)
    assert not [text for text in _visible_texts(window) if "starter model" in text]
    assert window.model_label.text() == "Model: none installed"


# -- a real model already on this computer (discovery) ----------------------------------------

GIB = 1024 ** 3


@pytest.fixture
def laptop(monkeypatch):
    from searchain.llm.models import recommend

    monkeypatch.setattr(recommend, "machine_facts", lambda: recommend.MachineFacts(16 * GIB, 12 * GIB))


def _found_offer(qtbot, window):
    job = look_for_found_models(window)
    assert job is not None
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    return job


def test_a_model_found_on_this_computer_turns_the_notice_into_an_offer(
        qtbot, home, fake_starter, app_layouts, laptop):
    window = _window(qtbot, home)
    window.show_starter_notice()
    _found_offer(qtbot, window)
    qtbot.waitUntil(lambda: _button(window, "use_found") is not None)
    best = "Meta-Llama-3-8B-Instruct.Q4_0"  # the biggest quick chat model that fits the laptop
    text = window.message_bar.message.text() + " " + window.message_bar.hint.text()
    assert best in text and "GPT4All" in text and "nothing is copied" in text
    notice, _ = starter.starter_app_notice(window.ctx.settings.reasoning.mode)
    assert notice not in _visible_texts(window)  # the offer replaced the notice: one banner
    assert _button(window, "use_found").text() == f"Use {best}"
    assert _button(window, "catalogue").text() == "See all models…"
    assert _button(window, "starter_mode") is None  # a real model is there: no tiny-model advice
    before = tree_state(app_layouts.home)
    _button(window, "use_found").click()
    assert window.ctx.settings.llm.model_path == str(app_layouts.paths[best])  # in place
    assert Settings.load(home).llm.model_path == str(app_layouts.paths[best])
    assert window.model_label.text() == f"Model: {app_layouts.paths[best].name}"
    assert "starter" not in window.message_bar.message.text() + window.message_bar.hint.text()
    assert _button(window, "use_found") is None
    assert tree_state(app_layouts.home) == before  # nothing copied, moved or written


def test_nothing_found_leaves_the_notice_as_it_was(qtbot, home, fake_starter, user_home, laptop):
    window = _window(qtbot, home)
    window.show_starter_notice()
    message = window.message_bar.message.text()
    _found_offer(qtbot, window)  # an empty home: only the starter, which is never offered
    assert window.message_bar.message.text() == message and window.message_bar.topic == "starter"
    qtbot.waitUntil(lambda: _button(window, "starter_mode") is not None)


def test_a_model_chosen_while_looking_is_not_overridden(qtbot, home, fake_starter, app_layouts, laptop, tiny_gguf):
    window = _window(qtbot, home)
    window.show_starter_notice()
    job = look_for_found_models(window)
    window.use_model(str(tiny_gguf))  # before the search ends
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    assert window.ctx.settings.llm.model_path == str(tiny_gguf)
    assert _button(window, "use_found") is None
    assert look_for_found_models(window) is None  # a model is set: nothing to look for


def test_without_a_starter_the_first_run_guidance_offers_a_found_model(qtbot, home, no_starter, app_layouts, laptop):
    window = _window(qtbot, home)
    window.show_first_run_guidance()
    _found_offer(qtbot, window)
    qtbot.waitUntil(lambda: _button(window, "use_found") is not None)
    text = window.message_bar.message.text() + " " + window.message_bar.hint.text()
    assert "You already have Meta-Llama-3-8B-Instruct.Q4_0 from GPT4All" in text and "starter" not in text
    window.update_status()  # settings applied elsewhere: the offer stays while no model is chosen
    assert window.message_bar.topic == "found" and window.message_bar.isVisible()
    llm = window.ctx.settings.llm
    llm.backend, llm.server_url = "openai", "http://127.0.0.1:11434/v1"
    window.use_server("qwen3:8b @ 127.0.0.1:11434")  # a server chosen instead: the offer goes
    assert window.message_bar.topic != "found" and _button(window, "use_found") is None
