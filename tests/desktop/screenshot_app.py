"""Run by test_screenshot.py in a subprocess under Xvfb: show the main window mid-answer, save a PNG.

argv: home, tiny GGUF path, output PNG. A finished sample answer is opened first so the shot shows
[n] links and a reference list; a follow-up question is then answered live by the tiny model and
the window is captured once the reasoning panel has a checked node.
"""

import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from desktop.context import AppContext
from desktop.main_window import MainWindow
from searchain.config import AppPaths, Settings
from searchain.reasoning import events as ev
from searchain.store.records import RunInfo
from tests.fixtures.store import build_sample_result


def main() -> int:
    home, gguf, out = sys.argv[1:4]
    app = QApplication(sys.argv[:1])
    paths = AppPaths.resolve(home).ensure()
    settings = Settings.load(paths)
    settings.llm.model_path, settings.llm.n_ctx, settings.llm.n_threads = gguf, 2048, 2
    settings.llm.n_gpu_layers, settings.llm.max_tokens, settings.reasoning.r_max = 0, 48, 2
    window = MainWindow(AppContext(paths, settings), restore=False)
    store = window.ctx.workspace().conversations()
    result = build_sample_result()
    cid = store.create_conversation("Van Hook Township county seat")
    store.add_user_message(cid, result.question)
    mid = store.begin_answer(cid, RunInfo.from_settings(settings))
    store.finish_answer(mid, result)
    window.conversations.refresh()
    window.conversations.open(cid)
    window.show_reference(result.references[-1])
    window.side_tabs.setCurrentWidget(window.reasoning)
    window.show()
    shot = {"taken": False}

    def capture() -> None:
        if not shot["taken"]:
            shot["taken"] = True
            ok = window.grab().save(out)
            print(f"saved={ok} busy={window.answers.busy}", flush=True)
            window.answers.stop()

    def on_event(event) -> None:
        if isinstance(event, ev.NodeChecked):
            capture()  # grab() renders the widgets synchronously: no repaint to wait for

    def ask() -> None:
        window.answers.ask("Which river flows through Stanley, North Dakota?")
        window.answers.job.event.connect(on_event)

    window.answers.busy_changed.connect(lambda busy: busy or QTimer.singleShot(200, app.quit))
    QTimer.singleShot(300, ask)
    QTimer.singleShot(240_000, app.quit)
    app.exec()
    return 0 if shot["taken"] else 1


if __name__ == "__main__":
    sys.exit(main())
