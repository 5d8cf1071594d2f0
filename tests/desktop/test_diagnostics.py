"""Help > Check set-up, Help > Open log folder, the app's log file, and errors nobody caught."""

import threading

from PySide6.QtCore import QObject, QTimer, QUrl
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QPushButton

from desktop.context import AppContext
from desktop.diagnostics import ErrorHooks, start_logging
from desktop.main_window import MainWindow
from searchain.config import Settings
from searchain.logs import log_file, stop_file_log


def make_window(qtbot, home, settings=None):
    window = MainWindow(AppContext(home, settings or Settings.load(home)), restore=False)
    qtbot.addWidget(window)
    window.show()
    return window


def menu_texts(window, title):
    menu = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == title)
    return [a.text().replace("&", "") for a in menu.actions() if a.text()]


def test_check_setup_shows_each_finding_with_its_fix_as_plain_text(qtbot, home):
    settings = Settings.load(home)
    settings.llm.model_path = str(home.data_dir / "<b>gone</b>.gguf")
    window = make_window(qtbot, home, settings)
    assert {"Check set-up…", "Open log folder"} <= set(menu_texts(window, "Help"))

    job = window.check_setup()
    dialog = window.setup_check.dialog
    assert dialog.isVisible() and "Checking" in dialog.summary.text() and not dialog.copy.isEnabled()
    qtbot.waitUntil(lambda: not job.running, timeout=30_000)

    text = dialog.body.toPlainText()
    assert "1 problem needs fixing" in dialog.summary.text()
    assert text.splitlines()[0].startswith("Problem  model: ")  # problems first
    assert "<b>gone</b>.gguf" in text  # markup in a path stays characters
    assert "Warning  corpus: The demo corpus is not prepared yet." in text
    assert "Fix: " in text and "OK  embedder:" in text

    # Each finding links to where the app fixes it.
    html_text = dialog.body.toHtml()
    assert 'href="fix:model"' in html_text and 'href="fix:corpus"' in html_text
    assert 'href="fix:embedder"' not in html_text  # OK findings need no fixing
    dialog.body.anchorClicked.emit(QUrl("fix:model"))
    assert window.model_dialog.isVisible()
    dialog.body.anchorClicked.emit(QUrl("fix:corpus"))
    assert window.corpus_dialog.isVisible()
    dialog.body.anchorClicked.emit(QUrl("fix:settings"))
    assert window.settings_dialog.isVisible()

    dialog.copy_report()
    report = QGuiApplication.clipboard().text()
    assert report.startswith("# SearChain set-up check") and "## System" in report and "<b>gone</b>" in report

    # Fixed in the app's (unsaved) settings: checking again uses them.
    window.ctx.settings.llm.model_path = ""
    dialog.recheck.click()
    qtbot.waitUntil(lambda: not window.setup_check.job.running, timeout=30_000)
    assert "0 problems)" in dialog.summary.text() and "Warning  model: No chat model" in dialog.body.toPlainText()


def test_open_log_folder_hands_the_folder_to_the_desktop(qtbot, home, opened_files):
    window = make_window(qtbot, home)
    window.open_log_folder()
    window.message_bar.show_message("x", actions=[("logs", "Open log folder")])
    window.message_bar.findChild(QObject, "action_logs").click()
    assert opened_files == [str(home.log_dir), str(home.log_dir)] and home.log_dir.is_dir()

    home.log_dir.rmdir()
    home.log_dir.write_text("a file where the folder should be")
    assert window.open_log_folder() == "" and len(opened_files) == 2
    assert "The log folder cannot be created" in window.message_bar.message.text()


def test_uncaught_errors_are_logged_with_traceback_and_shown(qtbot, home):
    window = make_window(qtbot, home)
    path = start_logging(home)
    hooks = ErrorHooks(window).install()
    try:
        def broken_slot():
            raise ZeroDivisionError("the slot divided by zero")

        QTimer.singleShot(0, broken_slot)
        qtbot.waitUntil(lambda: len(hooks.shown) == 1, timeout=5_000)
        assert window.message_bar.isVisible()
        assert "Unexpected error" in window.message_bar.message.text()
        assert "ZeroDivisionError: the slot divided by zero" in window.message_bar.message.text()
        assert "Help > Open log folder" in window.message_bar.hint.text()
        assert window.message_bar.findChild(QObject, "action_logs") is not None

        hooks._last_shown = 0  # the rate limit is not under test here
        thread = threading.Thread(target=lambda: [][1], name="helper-thread")
        thread.start()
        thread.join()
        qtbot.waitUntil(lambda: len(hooks.shown) == 2, timeout=5_000)
        assert "IndexError" in window.message_bar.message.text()
    finally:
        hooks.uninstall()
        stop_file_log(home, "desktop")
    logged = path.read_text()
    assert "Uncaught ZeroDivisionError" in logged and "in broken_slot" in logged  # the traceback
    assert "Uncaught IndexError in thread helper-thread" in logged


def test_a_burst_of_errors_is_shown_once_and_logged_in_full(qtbot, home):
    window = make_window(qtbot, home)
    path = start_logging(home)
    hooks = ErrorHooks(window).install()
    try:
        def broken(n):
            raise ValueError(f"failure {n}")

        for n in range(5):
            QTimer.singleShot(0, lambda n=n: broken(n))
        qtbot.waitUntil(lambda: path.read_text().count("Uncaught ValueError") == 5, timeout=5_000)
        qtbot.wait(50)
    finally:
        hooks.uninstall()
        stop_file_log(home, "desktop")
    assert len(hooks.shown) == 1


def test_uninstall_puts_the_previous_hooks_back(qtbot, home):
    import sys

    window = make_window(qtbot, home)
    before = (sys.excepthook, threading.excepthook)
    hooks = ErrorHooks(window).install()
    assert sys.excepthook != before[0] and threading.excepthook != before[1]
    hooks.uninstall()
    assert (sys.excepthook, threading.excepthook) == before


def test_job_outcomes_and_unexpected_failures_reach_the_log(qtbot, home):
    from searchain.errors import ModelError

    window = make_window(qtbot, home)
    start_logging(home)
    try:
        def crash(_on_event, _cancel):
            raise KeyError("no such key")

        def explained(_on_event, _cancel):
            raise ModelError("The model file is missing.", hint="Pick another.")

        jobs = [window.runner.start("crashing-job", crash, on_error=lambda e: None),
                window.runner.start("explained-job", explained, on_error=lambda e: None),
                window.runner.start("fine-job", lambda _e, _c: 42)]
        qtbot.waitUntil(lambda: not any(j.running for j in jobs), timeout=10_000)
    finally:
        stop_file_log(home, "desktop")
    logged = log_file(home, "desktop").read_text()
    assert "job crashing-job failed unexpectedly" in logged and "KeyError: 'no such key'" in logged
    assert "job explained-job failed: The model file is missing. (Pick another.)" in logged
    assert "Traceback" not in logged.split("explained-job")[1].split("\n")[0]
    assert "job fine-job finished in" in logged
    assert "SearChain Desktop" in logged and "starting" in logged


def test_an_unexplained_failure_offers_the_log_and_the_set_up_check(qtbot, home):
    from searchain.errors import ModelError

    window = make_window(qtbot, home)
    window.message_bar.show_error(KeyError("node"), "Could not answer")
    assert window.message_bar.findChild(QObject, "action_logs") is not None
    window.message_bar.findChild(QObject, "action_doctor").click()
    assert window.setup_check.dialog.isVisible()
    qtbot.waitUntil(lambda: not window.setup_check.job.running, timeout=30_000)

    window.message_bar.show_error(ModelError("The model file is missing.", hint="Pick another."))
    shown = [b.objectName() for b in window.message_bar.findChildren(QPushButton)
             if b.isVisibleTo(window.message_bar)]
    assert [name for name in shown if name.startswith("action_")] == []  # explained: no log needed


def test_check_data_reads_the_databases_through_and_reports_leftovers(qtbot, home):
    """Help > Check set-up > Check data: the integrity checks of ``doctor --check-data``, on a
    worker, added to the findings; it reports a leftover and deletes nothing."""
    leftover = home.corpora_dir / ".import-stopped"
    leftover.mkdir(parents=True)
    (leftover / "passages.db").write_bytes(b"half a file")
    import os
    import time

    old = time.time() - 3600  # an hour old: no running job holds it
    os.utime(leftover, (old, old))
    window = make_window(qtbot, home)
    job = window.check_setup()
    dialog = window.setup_check.dialog
    qtbot.waitUntil(lambda: not job.running, timeout=30_000)
    assert dialog.check_data.isEnabled() and ".import-stopped" not in dialog.body.toPlainText()
    dialog.check_data.click()
    qtbot.waitUntil(lambda: not window.setup_check.job.running, timeout=60_000)
    text = dialog.body.toPlainText()
    assert ".import-stopped" in text and "conversations" in text.lower()
    assert (leftover / "passages.db").exists()  # reported, never deleted
