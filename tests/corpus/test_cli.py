"""`searchain corpus ...` end to end through the real CLI entry point, and the progress bar."""

import io
import json

import pytest

from searchain.cli.main import main
from searchain.cli.progress import ProgressPrinter, cancel_on_interrupt, render
from searchain.events import Progress


def run(home, *args):
    return main(["--home", str(home.config_dir.parent), *args])


def test_add_list_info_use_remove(home, tmp_path, capsys):
    src = tmp_path / "p.tsv"
    src.write_text("id\ttext\ttitle\n1\tfirst passage\tA\n2\tsecond passage\tB\nbroken line\n", encoding="utf-8")
    assert run(home, "corpus", "add", "mine", str(src), "--no-index") == 0
    out, err = capsys.readouterr()
    assert "added 2 passages" in out and "1 skipped" in out
    assert f"{src}:4: expected 3 tab-separated fields" in err

    assert run(home, "corpus", "list", "--json") == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(c["name"], c["passages"], c["state"]) for c in listed] == [
        ("demo", None, "not made"), ("mine", 2, "ready")]  # the demo is made on first use

    assert run(home, "corpus", "use", "mine") == 0
    assert run(home, "corpus", "list") == 0
    out = capsys.readouterr().out
    assert "* mine" in out and "ready" in out

    assert run(home, "corpus", "info", "mine") == 0
    out = capsys.readouterr().out
    assert "passages:  2" in out and "(active)" in out and "[tsv]" in out

    assert run(home, "corpus", "remove", "mine", "--yes") == 0
    assert run(home, "corpus", "info", "mine") == 1
    assert "no corpus named 'mine'" in capsys.readouterr().err


def test_errors_are_one_clear_line_and_exit_1(home, tmp_path, capsys):
    assert run(home, "corpus", "add", "x", str(tmp_path / "nope.jsonl"), "--no-index") == 1
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "e.jsonl").write_text("")
    assert run(home, "corpus", "add", "x", str(tmp_path / "e.jsonl"), "--no-index") == 1
    assert "is empty" in capsys.readouterr().err


def test_remove_without_yes_refuses_when_not_interactive(home, tmp_path, capsys, monkeypatch):
    src = tmp_path / "p.jsonl"
    src.write_text('{"id": 1, "text": "t"}\n')
    run(home, "corpus", "add", "c", str(src), "--no-index")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert run(home, "corpus", "remove", "c") == 1
    assert "--yes" in capsys.readouterr().err
    assert run(home, "corpus", "info", "c", "--json") == 0


def test_rebuild_command(home, tmp_path, capsys):
    src = tmp_path / "p.jsonl"
    src.write_text('{"id": 1, "text": "t"}\n{"id": 2, "text": "u"}\n')
    run(home, "corpus", "add", "c", str(src), "--no-index")
    assert run(home, "corpus", "rebuild", "c", "--no-index") == 0
    assert "added 2 passages" in capsys.readouterr().out


def test_render_shows_bar_counts_rate_and_eta():
    line = render(Progress("embed", 250, 1000, "batch 3", started_at=0.0), now=10.0)
    assert line.startswith("embed")
    assert "[######" in line and " 25.0%" in line and "250/1.0k" in line
    assert "25/s" in line and "ETA 0:30" in line and line.endswith("batch 3")
    assert "%" not in render(Progress("read", 5, None, started_at=0.0), now=1.0)


def test_printer_throttles_and_finishes_lines():
    clock = iter([0.0, 0.01, 0.02, 5.0, 5.01]).__next__
    out = io.StringIO()
    show = ProgressPrinter(out, tty=True, min_interval=0.1, clock=clock)
    show(Progress("a", 1, 10, started_at=0.0))   # drawn: new stage
    show(Progress("a", 2, 10, started_at=0.0))   # skipped: too soon
    show("not a progress event")
    show(Progress("a", 10, 10, started_at=0.0))  # drawn: finished, ends the line
    show(Progress("b", 1, None, started_at=0.0))  # drawn: new stage
    show.close()
    text = out.getvalue()
    assert text.count("\r") == 3 and "2/10" not in text and text.endswith("\n")


def test_printer_without_tty_prints_plain_lines():
    out = io.StringIO()
    show = ProgressPrinter(out, tty=False, clock=iter([0.0, 1.0, 100.0]).__next__)
    for done in (1, 2, 3):
        show(Progress("s", done, 10, started_at=0.0))
    assert "\r" not in out.getvalue() and out.getvalue().count("\n") == 2


def test_first_interrupt_cancels_the_token():
    import os
    import signal

    err = io.StringIO()
    with cancel_on_interrupt(err) as token:
        os.kill(os.getpid(), signal.SIGINT)
        assert token.cancelled
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
    assert "stopping" in err.getvalue()


def test_printer_does_not_repeat_an_identical_event():
    out = io.StringIO()
    show = ProgressPrinter(out, tty=False, clock=iter([0.0, 1.0, 2.0]).__next__)
    done = Progress("s", 10, 10, started_at=0.0)
    show(done)
    show(done)
    assert out.getvalue().count("\n") == 1


@pytest.mark.slow
def test_ctrl_c_in_a_real_cli_process_stops_cleanly_and_keeps_passages(home, tmp_path):
    import os
    import signal
    import subprocess
    import sys

    src = tmp_path / "big.tsv"
    src.write_text("".join(f"{i}\tshort passage number {i}\tT{i}\n" for i in range(100_000)), encoding="utf-8")
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.Popen([sys.executable, "-m", "searchain", "--home", str(home.config_dir.parent),
                             "corpus", "add", "big", str(src), "--no-index"],
                            cwd=repo, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    first = proc.stderr.readline()  # the ingest stage has started
    assert first.startswith("ingest")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, (out, err)
    assert "stopping after the current batch" in err and "run the same command again" in err
    from searchain.corpus.manager import CorpusManager
    from searchain.config import Settings

    info = CorpusManager(home, Settings()).info("big")
    assert info.state == "incomplete" and info.passages < 100_000  # stopped at a batch boundary
    assert main(["--home", str(home.config_dir.parent), "corpus", "add", "big", str(src), "--no-index"]) == 0
    assert CorpusManager(home, Settings()).info("big").passages == 100_000


def test_a_fresh_home_lists_the_demo_corpus_it_makes_on_first_use(home, capsys):
    assert run(home, "corpus", "list") == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "demo" in line)
    assert row.startswith("* demo (made on first use)") and "not made" in row
    assert "searchain corpus add NAME SOURCE" in out
    assert run(home, "corpus", "info", "demo") == 0
    out = capsys.readouterr().out
    assert "not made yet" in out and "searchain corpus index demo" in out
    assert not (home.corpora_dir / "demo").exists()  # looking does not make it


@pytest.mark.slow
def test_corpus_index_demo_makes_and_indexes_it_in_a_fresh_home(home, capsys):
    assert run(home, "corpus", "index", "demo", "--yes") == 0, capsys.readouterr().err
    assert "demo: index ready" in capsys.readouterr().out
    assert run(home, "corpus", "list", "--json") == 0
    demo, = json.loads(capsys.readouterr().out)
    assert demo["state"] == "ready" and demo["indexed"] == demo["passages"] >= 40
