"""Start-up: the window appears without importing torch or llama.cpp; a broken settings file is kept."""

import json
import subprocess
import sys
from pathlib import Path

from desktop.app import load_settings

REPO = Path(__file__).resolve().parents[2]


def test_window_shows_without_heavy_imports(tmp_path):
    code = ("import sys, json; from desktop.app import main; "
            f"main(['--home', {str(tmp_path)!r}, '--quit-after-show', '--no-background']); "
            "print(json.dumps(sorted(m for m in ('torch', 'llama_cpp', 'sentence_transformers', "
            "'transformers') if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                         timeout=120, check=True).stdout.splitlines()
    assert json.loads(out[0])["seconds_to_window"] > 0
    assert json.loads(out[-1]) == []


def test_broken_settings_file_is_kept_and_defaults_used(home):
    home.settings_file.write_text("{ not json", encoding="utf-8")
    settings, note, kind = load_settings(home)
    assert settings.active_corpus == "demo" and "default settings" in note and kind == "error"
    kept = list(home.config_dir.glob("settings.broken-*.json"))
    assert len(kept) == 1 and kept[0].read_text() == "{ not json"


def test_bad_values_fall_back_one_by_one_and_the_file_is_copied(home):
    original = '{"active_corpus": "wiki", "reasoning": {"top_k": 0}}'
    home.settings_file.write_text(original, encoding="utf-8")
    settings, note, kind = load_settings(home)
    assert settings.active_corpus == "wiki" and settings.reasoning.top_k == 1 and kind == "error"
    assert "reasoning.top_k must be at least 1" in note and "Using the default" in note
    [kept] = home.config_dir.glob("settings.before-*.json")
    assert kept.read_text() == original and str(kept) in note
    assert home.settings_file.read_text() == original  # rewritten only when the app saves


def test_the_app_logs_to_its_file_and_survives_a_bug_in_a_slot(tmp_path):
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "settings.json").write_text(json.dumps({"reasoning": {"top_k": 0}}))
    code = ("import sys; from PySide6.QtCore import QTimer; from PySide6.QtWidgets import QApplication\n"
            "app = QApplication(sys.argv[:1])\n"
            "def bug(): raise ZeroDivisionError('a bug in a slot')\n"
            "QTimer.singleShot(300, bug); QTimer.singleShot(900, app.quit)\n"
            "from desktop.app import main\n"
            f"code = main(['--home', {str(tmp_path)!r}, '--no-background', '--no-restore'])\n"
            "print('hooks restored', sys.excepthook is sys.__excepthook__); sys.exit(code)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "hooks restored True" in proc.stdout
    assert "Traceback" not in proc.stderr  # it went to the log, not to a console nobody reads
    log = (tmp_path / "cache" / "logs" / "desktop.log").read_text()
    assert "SearChain Desktop" in log and "starting" in log
    assert "reasoning.top_k must be at least 1" in log  # the settings note
    assert "Uncaught ZeroDivisionError" in log and "a bug in a slot" in log and "in bug" in log


def test_demo_preparation_is_one_build_that_a_question_asked_meanwhile_waits_for(qtbot, home, monkeypatch):
    import threading

    from desktop.app import demo_progress_text, prepare_demo_corpus
    from desktop.context import AppContext
    from desktop.main_window import MainWindow
    from searchain.config import Settings
    from searchain.events import Progress
    from searchain.index.build import builder

    builds, started = [], threading.Event()
    real_build = builder.build_index

    def counted_build(*args, **kwargs):
        builds.append(args[2])
        started.set()
        return real_build(*args, **kwargs)

    monkeypatch.setattr(builder, "build_index", counted_build)
    window = MainWindow(AppContext(home, Settings.load(home)), restore=False)
    qtbot.addWidget(window)
    messages = []
    window.statusBar().messageChanged.connect(messages.append)
    job = prepare_demo_corpus(window)
    # A question's retrieval, on another thread, while the demo index is being built.
    assert started.wait(60)
    found = []
    asker = threading.Thread(target=lambda: found.append(window.ctx.workspace().retriever("demo")))
    asker.start()
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    asker.join(60)
    assert builds == ["demo"] and found and found[0].search("river", 1)
    assert any(m.startswith("Preparing the demo corpus: embedding passages ") for m in messages)
    assert "Demo corpus ready" in messages
    # Counted stages read as words; a stage with no count yet says what it is doing.
    assert demo_progress_text(Progress("embed 2nd", 0, 0, "loading sentence-transformers/x")) == \
        "Preparing the demo corpus: embedding with the second model (loading sentence-transformers/x)…"
    assert demo_progress_text(Progress("index", 5, 43)) == "Preparing the demo corpus: building the search index 5/43"
