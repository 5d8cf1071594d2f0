"""Time-to-window benchmark: ``python -m desktop.bench_startup [--runs N]`` prints one JSON object.

Each run is a cold process start: ``searchain-desktop --quit-after-show`` (the real app with a fresh
home: settings, main window, no engine imports) against a baseline measured in the same run, a bare
QApplication + QMainWindow shown the same way. Medians and the ratio are reported; the process also
checks that neither torch nor llama_cpp was imported before the window appeared.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

BASELINE = r"""
import sys, time
t0 = time.perf_counter()
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMainWindow
app = QApplication(sys.argv[:1]); w = QMainWindow(); w.resize(1280, 800); w.show()
def done():
    print('{"seconds_to_window": %.4f}' % (time.perf_counter() - t0)); app.quit()
QTimer.singleShot(0, done); app.exec()
"""

APP = r"""
import sys, time, json
t0 = time.perf_counter()
from desktop.app import main
code = main(["--home", sys.argv[1], "--quit-after-show", "--no-background"])
heavy = sorted(m for m in ("torch", "llama_cpp", "sentence_transformers", "transformers") if m in sys.modules)
print(json.dumps({"heavy_modules": heavy}))
"""


def _run(code: str, *args: str) -> tuple[float, float, dict]:
    """(wall seconds for the whole process start..window, in-process seconds, extra JSON)."""
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env,
                         timeout=120, check=True).stdout
    wall = time.perf_counter() - started
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    window = next(line["seconds_to_window"] for line in lines if "seconds_to_window" in line)
    extra = {k: v for line in lines for k, v in line.items() if k != "seconds_to_window"}
    return wall, window, extra


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m desktop.bench_startup")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    base_wall, app_wall, app_inproc, heavy = [], [], [], set()
    with tempfile.TemporaryDirectory() as home:
        for _ in range(args.runs):  # interleaved so machine load affects both alike
            base_wall.append(_run(BASELINE)[0])
            wall, inproc, extra = _run(APP, home)
            app_wall.append(wall)
            app_inproc.append(inproc)
            heavy.update(extra.get("heavy_modules", []))
    report = {
        "bench": "desktop_startup",
        "runs": args.runs,
        "app_seconds_to_window_median": round(statistics.median(app_wall), 3),
        "app_in_process_seconds_median": round(statistics.median(app_inproc), 3),
        "baseline_seconds_to_window_median": round(statistics.median(base_wall), 3),
        "ratio_app_over_baseline": round(statistics.median(app_wall) / statistics.median(base_wall), 2),
        "target_seconds": 1.5,
        "heavy_modules_imported_before_window": sorted(heavy),
        "platform": os.environ.get("QT_QPA_PLATFORM", "offscreen"),
    }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
