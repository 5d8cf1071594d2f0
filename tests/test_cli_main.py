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
