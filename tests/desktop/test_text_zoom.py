"""View > Bigger/Smaller text: the reading views change size, menus do not, and it is remembered."""

from PySide6.QtWidgets import QApplication

from desktop.context import AppContext
from desktop.main_window import MainWindow
from desktop.text_zoom import MAX_ZOOM, MIN_ZOOM
from searchain.config import Settings


def open_window(qtbot, home):
    window = MainWindow(AppContext(home, Settings.load(home)))
    window.confirm_destructive = False
    qtbot.addWidget(window)
    return window


def test_text_size_steps_clamps_and_survives_a_restart(qtbot, home):
    base = QApplication.font().pointSizeF()
    window = open_window(qtbot, home)
    assert window.chat.transcript.font().pointSizeF() == base
    assert window.zoom_text(+1) == base + 1 and window.zoom_text(+1) == base + 2
    for view in (window.chat.transcript, window.passage.body):
        assert view.font().pointSizeF() == base + 2
    assert window.chat.input.font().pointSizeF() == base  # only the reading views
    assert "Text size" in window.statusBar().currentMessage()
    for _ in range(40):
        window.zoom_text(+1)
    assert window.chat.transcript.font().pointSizeF() == base + MAX_ZOOM
    for _ in range(40):
        window.zoom_text(-1)
    assert window.chat.transcript.font().pointSizeF() == base + MIN_ZOOM > 0
    window.zoom_text(None)
    assert window.chat.transcript.font().pointSizeF() == base
    window.zoom_text(+3)
    window.close()  # saves the window state, text size included

    again = open_window(qtbot, home)
    assert again.chat.transcript.font().pointSizeF() == base + 3
    # A rendered answer keeps the size (setHtml takes the widget's font).
    again.chat.render()
    assert again.chat.transcript.document().defaultFont().pointSizeF() == base + 3


def test_a_bad_saved_value_is_ignored(qtbot, home):
    settings = Settings.load(home)
    settings.ui["text_zoom"] = "huge"
    settings.save(home)
    window = open_window(qtbot, home)
    assert window.chat.transcript.font().pointSizeF() == QApplication.font().pointSizeF()
