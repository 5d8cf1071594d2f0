"""Corpus files in the app: Export…, Import… (File > Import corpus) with a taken name, a damaged
file, and the work done on the worker, never on the UI thread."""

import threading

import pytest

from desktop.context import AppContext
from desktop.main_window import MainWindow
from desktop.views.corpora.manager import CorpusManagerDialog
from desktop.workers import JobRunner
from searchain.config import Settings
from tests.fixtures.index import MINI_CORPUS

pytestmark = pytest.mark.slow  # a real indexed corpus


def make_manager(qtbot, home):
    dialog = CorpusManagerDialog(AppContext(home, Settings.load(home)), JobRunner())
    dialog.confirm_destructive = False
    qtbot.addWidget(dialog)
    return dialog


def run_job(qtbot, dialog, start):
    """Start a job with ``start()`` and wait for the dialog's outcome; returns (outcome, job)."""
    with qtbot.waitSignal(dialog.job_finished, timeout=120_000) as outcome:
        job = start()
        assert job is not None and not dialog.progress.isHidden()
        assert not dialog.buttons["import"].isEnabled()  # one corpus job at a time
    return outcome.args[0], job


def test_export_then_import_under_a_new_name_when_the_name_is_taken(qtbot, indexed_copy, tmp_path):
    dialog = make_manager(qtbot, indexed_copy)
    file = tmp_path / "mini.searchain-corpus"
    outcome, job = run_job(qtbot, dialog, lambda: dialog.transfer.export_to(MINI_CORPUS, file))
    assert outcome == "done" and file.is_file(), dialog.status.text()
    assert "Exported 'mini'" in dialog.status.text()
    assert job.worker_thread_id not in (None, threading.get_ident())

    asked = []

    def ask(taken, suggestion):
        asked.append((taken, suggestion))
        return "shared"

    dialog.transfer.ask_new_name = ask
    # The first job stops at the taken name, the manager asks, a second job installs.
    outcome, job = run_job(qtbot, dialog, lambda: dialog.transfer.import_file(file))
    assert outcome == "done" and asked == [(MINI_CORPUS, f"{MINI_CORPUS}-2")]
    assert dialog.names() == [MINI_CORPUS, "shared"], dialog.status.text()
    assert "Imported 'shared': 20 passages" in dialog.status.text()
    assert dialog.selected() == "shared"


def test_declining_the_new_name_imports_nothing(qtbot, indexed_copy, tmp_path):
    from searchain.library.bundle_export import export_corpus

    file = export_corpus(indexed_copy, Settings(), MINI_CORPUS, tmp_path / "m.zip").file
    dialog = make_manager(qtbot, indexed_copy)
    dialog.transfer.ask_new_name = lambda taken, suggestion: None
    with qtbot.waitSignal(dialog.job_finished, timeout=120_000) as outcome:
        dialog.transfer.import_file(file)
    assert outcome.args == ["cancelled"] and dialog.job is None
    assert "Import cancelled" in dialog.status.text() and dialog.names() == [MINI_CORPUS]
    assert dialog.buttons["import"].isEnabled()


def test_a_damaged_file_is_refused_with_its_fix(qtbot, indexed_copy, tmp_path):
    from searchain.library.bundle_export import export_corpus

    file = export_corpus(indexed_copy, Settings(), MINI_CORPUS, tmp_path / "m.zip").file
    short = tmp_path / "short.zip"
    short.write_bytes(file.read_bytes()[:5000])
    dialog = make_manager(qtbot, indexed_copy)
    outcome, _ = run_job(qtbot, dialog, lambda: dialog.transfer.import_file(short, as_name="x"))
    assert outcome == "failed"
    assert "damaged or incomplete" in dialog.status.text() and "Copy or download" in dialog.status.text()
    assert dialog.names() == [MINI_CORPUS]


def test_file_menu_import_corpus_opens_the_manager_with_the_picker(qtbot, indexed_copy, tmp_path, monkeypatch):
    from searchain.library.bundle_export import export_corpus

    file = export_corpus(indexed_copy, Settings(), MINI_CORPUS, tmp_path / "m.zip").file
    window = MainWindow(AppContext(indexed_copy, Settings.load(indexed_copy)), restore=False)
    qtbot.addWidget(window)
    file_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&File")
    action = next(a for a in file_menu.actions() if a.text().replace("&", "") == "Import corpus…")
    picked = []

    def pick(parent, caption, folder, filt):
        picked.append(caption)
        return str(file), filt

    monkeypatch.setattr("desktop.views.corpora.transfer.QFileDialog.getOpenFileName", pick)
    monkeypatch.setattr("desktop.views.corpora.transfer.CorpusTransfer.ask_new_name",
                        lambda self, taken, suggestion: "from-menu")
    action.trigger()
    dialog = window.corpus_dialog
    assert picked == ["Import a corpus file"] and dialog.isVisible()
    qtbot.waitUntil(lambda: "from-menu" in dialog.names(), timeout=120_000)
    qtbot.waitUntil(lambda: dialog.job is None, timeout=120_000)
    window.runner.wait(10_000)
