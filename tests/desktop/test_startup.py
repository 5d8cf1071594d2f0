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
    settings, note = load_settings(home)
    assert settings.active_corpus == "demo" and "default settings" in note
    kept = list(home.config_dir.glob("settings.broken-*.json"))
    assert len(kept) == 1 and kept[0].read_text() == "{ not json"
