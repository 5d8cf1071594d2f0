"""Render the main window mid-answer on a real X server (Xvfb) and save a screenshot artifact."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
ARTIFACT = REPO / ".artifacts" / "main-window-mid-answer.png"


@pytest.fixture
def xvfb_display():
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed (apt-get install -y xvfb; `make test` installs it as root)")
    display = f":{90 + os.getpid() % 500}"
    server = subprocess.Popen(["Xvfb", display, "-screen", "0", "1400x900x24", "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    socket = Path(f"/tmp/.X11-unix/X{display[1:]}")
    for _ in range(100):
        if socket.exists() or server.poll() is not None:
            break
        time.sleep(0.05)
    if server.poll() is not None:
        pytest.fail(f"Xvfb exited at start (code {server.returncode})")
    yield display
    server.terminate()
    server.wait(10)


def test_main_window_mid_answer_screenshot(xvfb_display, demo_home, tiny_gguf):
    ARTIFACT.parent.mkdir(exist_ok=True)
    ARTIFACT.unlink(missing_ok=True)
    env = dict(os.environ, QT_QPA_PLATFORM="xcb", DISPLAY=xvfb_display,
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("screenshot_app.py")),
                           str(demo_home.data_dir.parent), str(tiny_gguf), str(ARTIFACT)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "saved=True busy=True" in done.stdout  # captured while the answer was still running
    from PySide6.QtGui import QImage

    image = QImage(str(ARTIFACT))
    assert image.width() >= 1000 and image.height() >= 600
    assert len({image.pixel(x, y) for x in range(0, image.width(), 37) for y in range(0, image.height(), 37)}) > 20
