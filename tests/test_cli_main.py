import subprocess
import sys

from searchain.config import LLMSettings
from searchain.llm.loader import load_llm


def test_output_into_a_closed_pipe_is_not_a_traceback(home):
    # `searchain ... | head -1` where head has already gone: stdout is a pipe with no reader.
    code = (
        "import os, sys\n"
        "r, w = os.pipe(); os.close(r); os.dup2(w, 1)\n"
        "from searchain.cli.main import main\n"
        "sys.exit(main(['models', 'catalogue']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


def test_configured_server_model_is_used_without_asking_the_server():
    # An unreachable port: the backend must not need the server to know which model to use.
    llm = load_llm(LLMSettings(backend="openai", server_url="http://127.0.0.1:9", server_model="qwen"))
    assert llm.model == "qwen"


def test_unknown_command_prints_help_and_fails(capsys):
    from searchain.cli.main import main

    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().out


def test_a_bug_is_one_line_on_stderr_and_a_traceback_in_the_log(home, capsys, monkeypatch):
    import searchain.cli.doctor as doctor
    from searchain.cli.main import main

    def broken(ctx, args):
        raise ZeroDivisionError("a bug in a command")

    monkeypatch.setattr(doctor, "run", broken)
    monkeypatch.delenv("SEARCHAIN_TRACEBACK", raising=False)
    assert main(["doctor"]) == 1
    err = capsys.readouterr().err
    log = home.log_dir / "cli.log"
    assert err.startswith("error: unexpected ZeroDivisionError: a bug in a command\n")
    assert str(log) in err and "Traceback" not in err
    logged = log.read_text()
    assert "`searchain doctor` failed" in logged and "in broken" in logged and "ZeroDivisionError" in logged

    monkeypatch.setenv("SEARCHAIN_TRACEBACK", "1")
    assert main(["doctor"]) == 1
    assert "Traceback (most recent call last)" in capsys.readouterr().err


def test_ask_says_on_stderr_what_the_engine_is_doing(capsys):
    from searchain.cli.ask import _progress
    from searchain.reasoning.events import DraftStarted, NodeChecked, RoundStarted
    from searchain.reasoning.result import DECISION_PASS, Node

    node = Node(round=1, position=0, query="Who founded Kestrel Bay?", llm_answer="Ada",
                confidence=0.91, decision=DECISION_PASS)
    for event in (RoundStarted(1), DraftStarted(), NodeChecked(1, node)):
        _progress(event)
    out, err = capsys.readouterr()
    assert out == ""  # stdout keeps the answer alone
    assert err.splitlines() == ["round 1: writing a chain of queries...",
                                "drafting an answer from the question's passages...",
                                "  verified      Who founded Kestrel Bay? -> Ada (reader 0.91)"]


def test_version_is_printed(capsys):
    import pytest

    from searchain import __version__
    from searchain.cli.main import main

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"searchain {__version__}"
