"""``searchain-desktop``: start the app.

Start-up does only what the first frame needs (Qt, settings, the main window); the engine and
its heavy libraries (torch, llama.cpp) load later, on worker threads. After the window is shown,
background jobs make sure the demo corpus is ready and check GPU offload support.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import time
from pathlib import Path

from searchain.config import HOME_ENV, AppPaths, Settings
from searchain.errors import ConfigError, SearchainError


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="searchain-desktop", description="SearChain Desktop")
    parser.add_argument("--home", help=f"keep config, data and cache under this folder (default: ${HOME_ENV}, "
                        "else the platform's user directories)")
    parser.add_argument("--no-restore", action="store_true", help="ignore the saved window layout")
    parser.add_argument("--no-background", action="store_true",
                        help="skip the start-up jobs (demo corpus, GPU check); for measurements")
    parser.add_argument("--quit-after-show", action="store_true",
                        help="print seconds-to-window as JSON and quit once the window is on screen")
    args, _qt_args = parser.parse_known_args(argv)
    return args


def load_settings(paths: AppPaths) -> tuple[Settings, str, str]:
    """Settings, a note for the message bar and its kind ("error" or "info"; "" with no note).
    A broken file gives the defaults, and is kept, renamed, not lost. Bad values in a readable
    file fall back to their defaults one by one, with a note; a copy of the file as it was is
    kept beside it. A file from before settings kept only changed values takes the defaults
    improved since and is saved in the short form at once (a copy kept), with a note naming
    them (none when no value changed)."""
    problems: list[str] = []
    adopted: list[str] = []
    try:
        settings = Settings.load(paths, problems, adopted)
        if not problems and not adopted and not _written_whole(paths):
            return settings, "", ""
        kept = paths.settings_file.with_name(f"settings.before-{time.strftime('%Y%m%d-%H%M%S')}.json")
        try:
            shutil.copy2(paths.settings_file, kept)
            saved = f" A copy of the file as it was is kept as {kept}."
        except OSError:
            saved = ""
        if problems:
            return settings, "Some settings could not be used: " + " ".join(problems) + saved, "error"
        if saved:  # only with the old file kept: rewriting loses nothing then
            try:
                settings.save(paths)
            except (OSError, SearchainError):
                pass  # the new defaults still apply this time; the file is rewritten on the next save
        if not adopted:
            return settings, "", ""  # a whole file rewritten short, nothing else changed: nothing to say
        return settings, "Improved defaults adopted: " + " ".join(adopted) + saved, "info"
    except ConfigError as exc:
        broken = paths.settings_file
        kept = broken.with_name(f"settings.broken-{time.strftime('%Y%m%d-%H%M%S')}.json")
        try:
            broken.replace(kept)
        except OSError:
            kept = broken
        return Settings(), f"{exc.message} Started with default settings; your file was kept as {kept}.", "error"


def _written_whole(paths: AppPaths) -> bool:
    """Whether the settings file is one from before files held only changed values."""
    from searchain.settings_file import is_full_file

    try:
        data = json.loads(paths.settings_file.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and is_full_file(data)


def main(argv: list[str] | None = None) -> int:
    started = time.perf_counter()
    args = parse_args(sys.argv[1:] if argv is None else argv)
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("SearChain")
    app.setOrganizationName("SearChain")
    app.setDesktopFileName("searchain-desktop")
    try:
        paths = AppPaths.resolve(args.home).ensure()
    except OSError as exc:
        print(f"error: cannot create the SearChain folders: {exc}", file=sys.stderr)
        return 1
    settings, settings_note, note_kind = load_settings(paths)

    from .context import AppContext
    from .main_window import MainWindow, app_icon

    app.setWindowIcon(app_icon())
    ctx = AppContext(paths, settings)
    window = MainWindow(ctx, restore=not args.no_restore)
    hooks = []
    try:
        return run_window(app, window, args, (settings_note, note_kind), started, hooks)
    finally:
        for hook in hooks:
            hook.uninstall()


def run_window(app, window, args, settings_note: tuple[str, str], started: float, hooks: list) -> int:
    """Show the window and run the event loop until the app quits; returns its exit code.
    ``settings_note``: ``load_settings``'s note and its kind, for the message bar and the log.
    The log file and the error hooks (appended to ``hooks``) start right after the first frame."""
    from PySide6.QtCore import QTimer

    window.show()
    if args.quit_after_show:
        # The first paint has happened once the event loop has run once after show().
        def report() -> None:
            print('{"seconds_to_window": %.4f}' % (time.perf_counter() - started), flush=True)
            app.quit()

        QTimer.singleShot(0, report)
        return app.exec()
    note, note_kind = settings_note
    if note:
        window.message_bar.show_message(note, kind=note_kind)

    def start_diagnostics() -> None:
        from .diagnostics import ErrorHooks, start_logging

        start_logging(window.ctx.paths)
        if note:
            logging.getLogger("desktop").log(logging.WARNING if note_kind == "error" else logging.INFO, "%s", note)
        hooks.append(ErrorHooks(window).install())

    QTimer.singleShot(0, start_diagnostics)
    if not args.no_background:
        QTimer.singleShot(0, lambda: start_background(window))
    return app.exec()


def start_background(window) -> None:
    """After the first frame: reopen the last chat, prepare the demo corpus, check the GPU, and
    load the model with the fixed part of its prompts."""
    ctx = window.ctx
    window.restore_last_conversation()
    if not ctx.settings.llm.model_path and ctx.settings.llm.backend == "llama_cpp":
        from searchain.llm import starter_model_path

        from .found_offer import look_for_found_models

        if starter_model_path(ctx.paths.models_dir) is not None:
            window.show_starter_notice()  # it answers, but say it is tiny and what to get
        else:
            window.show_first_run_guidance()
        look_for_found_models(window)  # a real model already on disk: the banner offers it
    elif ctx.settings.llm.model_path and not Path(ctx.settings.llm.model_path).expanduser().is_file():
        window.message_bar.show_message(
            f"The model file {ctx.settings.llm.model_path} is missing.",
            "Pick another in Settings > Model and reasoning, or download one from the catalogue.", kind="error",
            actions=[("catalogue", "Model catalogue…"), ("open_gguf", "Open GGUF file…")])
    prepare_demo_corpus(window)
    check_gpu(window)
    window.answers.warm_up()  # the first answer as fast as the next (llm.warm_up)


def demo_progress_text(event) -> str:
    """The status-bar line for a ``Progress`` of the demo corpus's preparation."""
    from .views.progress import stage_words

    words = stage_words(event.stage)
    if not event.total:  # a stage that has started but has no count yet, e.g. loading a model
        detail = f" ({event.message})" if event.message else ""
        return f"Preparing the demo corpus: {words}{detail}…"
    return f"Preparing the demo corpus: {words} {event.done:,}/{event.total:,}"


def prepare_demo_corpus(window):
    """Ingest and index the demo corpus on a worker when it is the active corpus and not ready.

    It goes through the workspace's retriever, so a question asked meanwhile waits for this one
    build (and then finds the retriever open) instead of starting a second build of the same index.
    """
    ctx = window.ctx
    if ctx.settings.active_corpus != "demo":
        return None

    def work(on_event, cancel):
        from searchain.library import DEMO_NAME

        ctx.workspace().retriever(DEMO_NAME, on_event=on_event, cancel=cancel)

    def progress(event) -> None:
        from searchain.events import Progress

        if isinstance(event, Progress):
            window.statusBar().showMessage(demo_progress_text(event))

    def done(_info) -> None:
        window.statusBar().showMessage("Demo corpus ready", 5000)
        window.update_status()

    def failed(exc) -> None:
        window.message_bar.show_error(exc, "The demo corpus could not be prepared")

    return window.runner.start("demo-corpus", work, on_event=progress, on_done=done, on_error=failed)


def check_gpu(window):
    def work(_on_event, _cancel):
        from searchain.llm import gpu_offload_supported

        return gpu_offload_supported()

    return window.runner.start("gpu-check", work, on_done=window.set_gpu_status,
                               on_error=lambda _exc: window.set_gpu_status(None))


if __name__ == "__main__":
    sys.exit(main())
