"""``searchain reader status|pull``: what ``auto`` would pick, and a clear error when offline."""

import json
import shutil

from searchain.cli.main import main
from searchain.reader.dpr import reader_dir


def test_status_reports_what_auto_uses(home, tiny_dpr_reader_dir, capsys):
    root = str(home.data_dir.parent)
    assert main(["--home", root, "reader", "status"]) == 0
    assert json.loads(capsys.readouterr().out)["auto_uses"] == "llm"
    shutil.copytree(tiny_dpr_reader_dir, reader_dir(home))
    assert main(["--home", root, "reader", "status"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["auto_uses"] == "dpr" and status["dpr_installed"] is True


def test_pull_offline_fails_with_hint(home, capsys):
    assert main(["--home", str(home.data_dir.parent), "reader", "pull"]) == 1
    err = capsys.readouterr().err
    assert "Could not download the DPR reader" in err and "hint:" in err
