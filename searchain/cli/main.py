"""Entry point of the ``searchain`` command.

Each command group lives in its own module under ``searchain.cli`` and exposes
``register(subparsers)``, which adds its parser(s) and sets ``func`` to a handler
``handler(ctx: Context, args) -> int``. Heavy libraries are imported inside handlers so that
``searchain --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from dataclasses import dataclass, field

from ..config import AppPaths, Settings
from ..errors import Cancelled, ConfigError, SearchainError

# Modules under searchain.cli, each with register(subparsers).
COMMAND_MODULES = ("corpus.command", "search", "models", "ask", "eval", "reader", "reranker", "chats", "bench",
                   "config", "doctor")


@dataclass
class Context:
    paths: AppPaths
    settings: Settings
    # Bad values read (and replaced by defaults) when a command reads settings leniently.
    settings_problems: list[str] = field(default_factory=list)
    # Why the settings file could not be read at all, for the one command that can repair that
    # (`config reset --all`, marked ``unreadable_settings_ok``); ``settings`` are the defaults.
    settings_error: SearchainError | None = None

    def save_settings(self) -> None:
        self.settings.save(self.paths)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="searchain",
        description="Offline Search-in-the-Chain question answering over local corpora.",
    )
    parser.add_argument(
        "--home",
        help="keep config, data and cache under this folder (default: $SEARCHAIN_HOME, "
        "else the platform's user directories)",
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"searchain.cli.{name}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        paths = AppPaths.resolve(args.home).ensure()
        # `config` reads a file with bad values leniently so that it can repair it; the other
        # commands refuse to run on settings they cannot honour.
        problems: list[str] | None = [] if getattr(args, "lenient_settings", False) else None
        # `doctor` reads (and reports on) the file itself, even one that is not JSON at all.
        settings, settings_error = Settings(), None
        if not getattr(args, "reads_settings_itself", False):
            try:
                settings = Settings.load(paths, problems)
            except ConfigError as exc:
                if not getattr(args, "unreadable_settings_ok", False):
                    raise
                settings_error = exc
        ctx = Context(paths=paths, settings=settings, settings_problems=problems or [],
                      settings_error=settings_error)
        return int(args.func(ctx, args) or 0)
    except SearchainError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except Cancelled:
        print("cancelled", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into `head` and closed early: not an error. Point stdout at devnull so
        # the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # noqa: BLE001 - a bug, not bad input: keep the traceback, say where
        return _unexpected(exc, args)


def _unexpected(exc: Exception, args) -> int:
    """One line on stderr, the traceback in ``<cache>/logs/cli.log`` (``SEARCHAIN_TRACEBACK=1``
    prints it as well)."""
    import logging
    import traceback

    from ..logs import start_file_log, stop_file_log

    where = None
    try:
        paths = AppPaths.resolve(getattr(args, "home", None))
        where = start_file_log(paths, "cli")
        logging.getLogger("searchain.cli").error("`searchain %s` failed", args.command, exc_info=exc)
        stop_file_log(paths, "cli")
    except Exception:  # noqa: BLE001 - logging must not hide the error itself
        where = None
    print(f"error: unexpected {type(exc).__name__}: {exc}", file=sys.stderr)
    if os.environ.get("SEARCHAIN_TRACEBACK") == "1" or where is None:
        traceback.print_exception(exc, file=sys.stderr)
    else:
        print(f"  The traceback is in {where}. `searchain doctor` checks the installation; "
              "SEARCHAIN_TRACEBACK=1 prints the traceback here.", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
