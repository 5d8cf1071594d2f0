"""The window says plainly when the tiny starter model answers, and names the model to get."""

from desktop.context import AppContext
from desktop.main_window import MainWindow
from searchain.config import Settings
from searchain.llm.models import starter


def _window(qtbot, home):
    window = MainWindow(AppContext(home, Settings.load(home)))
    qtbot.addWidget(window)
    window.show()
    return window


def test_the_starter_notice_shows_while_the_starter_answers(qtbot, home, fake_starter, tiny_gguf):
    window = _window(qtbot, home)
    notice = window.chat.starter_notice
    assert notice.isVisible() and "tiny starter model" in notice.text()
    assert starter.UPGRADE_NAME in notice.text()
    assert window.model_label.text() == f"Model: {starter.STARTER_LABEL} (tiny starter)"
    window.show_starter_notice()
    assert "tiny starter model" in window.message_bar.message.text()
    assert window.message_bar.findChild(object, "action_catalogue") is not None
    # A chosen model: the notice goes.
    window.ctx.settings.llm.model_path = str(tiny_gguf)
    window.update_status()
    assert not notice.isVisible() and window.model_label.text() == f"Model: {tiny_gguf.name}"


def test_no_notice_without_a_starter(qtbot, home, no_starter):
    window = _window(qtbot, home)
    assert not window.chat.starter_notice.isVisible()
    assert window.model_label.text() == "Model: none installed"
