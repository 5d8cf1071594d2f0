"""``searchain reader pull|status``: the DPR reader that verifies answers (download once, then offline)."""

from __future__ import annotations

import json
import sys


def register(sub) -> None:
    _register_reader(sub)


def _register_reader(sub) -> None:
    from ..reader.dpr import DEFAULT_DPR_READER

    parser = sub.add_parser("reader", help="the DPR reader used to verify answers (download, status)")
    rsub = parser.add_subparsers(dest="reader_command", metavar="ACTION", required=True)
    p = rsub.add_parser("pull", help=f"download a DPR reader (default {DEFAULT_DPR_READER}); needs a network once")
    p.add_argument("--name", default=DEFAULT_DPR_READER, help="Hugging Face repo of a DPR reader")
    p.set_defaults(func=handle_reader_pull)
    p = rsub.add_parser("status", help="which reader 'auto' would use")
    p.set_defaults(func=handle_reader_status)


def handle_reader_pull(ctx, args) -> int:
    from ..reader.dpr import download_dpr_reader

    def progress(event) -> None:
        print(f"{event.stage}: {event.done}/{event.total or '?'} {event.message}", file=sys.stderr)

    print(download_dpr_reader(ctx.paths, args.name, on_event=progress))
    return 0


def handle_reader_status(ctx, args) -> int:
    from ..reader.dpr import reader_dir
    from ..reader.loader import dpr_reader_available, dpr_reader_name

    name = dpr_reader_name(ctx.settings)
    installed = dpr_reader_available(ctx.paths, ctx.settings)
    print(json.dumps({"setting": ctx.settings.reasoning.reader, "dpr_reader": name,
                      "dpr_installed": installed, "dpr_folder": str(reader_dir(ctx.paths, name)),
                      "auto_uses": "dpr" if installed else "llm"}, indent=2))
    return 0
