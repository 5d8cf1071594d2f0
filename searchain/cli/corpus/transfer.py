"""``searchain corpus export NAME -o FILE`` and ``searchain corpus import FILE [--as NEW]``: a corpus
as one file another machine installs (``searchain.library.bundle_export`` / ``bundle_import``)."""

from __future__ import annotations

import sys

from ...errors import Cancelled
from ...units import size
from ..progress import ProgressPrinter, cancel_on_interrupt


def cmd_export(ctx, args) -> int:
    from ...library.bundle_export import export_corpus

    with cancel_on_interrupt() as cancel, ProgressPrinter() as show:
        report = export_corpus(ctx.paths, ctx.settings, args.name, args.output, on_event=show,
                               cancel=cancel, overwrite=args.overwrite)
    models = ", ".join(f"{r.embedder} ({r.count:,} vectors)" if r.count is not None else
                       f"{r.embedder} (unfinished)" for r in report.indexes) or "no index"
    print(f"{report.corpus}: exported {report.passages:,} passages and {models} to {report.file} "
          f"({size(report.bytes)}, {report.members} files) in {report.seconds:.1f}s")
    if report.index_state not in ("ready", "unknown"):
        print(f"note: its index was {report.index_state} when exported; after importing, "
              f"`searchain corpus index {report.corpus}` brings it up to date.", file=sys.stderr)
    return 0


def cmd_import(ctx, args) -> int:
    from ...library.bundle_import import import_corpus

    with cancel_on_interrupt() as cancel, ProgressPrinter() as show:
        try:
            report = import_corpus(ctx.paths, ctx.settings, args.file, as_name=args.as_name,
                                   on_event=show, cancel=cancel)
        except (Cancelled, KeyboardInterrupt):
            show.close()
            print("note: nothing was installed; import the file again when you are ready.",
                  file=sys.stderr)
            raise
    print(f"{report.corpus}: imported {report.passages:,} passages ({size(report.bytes)}) in "
          f"{report.seconds:.1f}s; ask questions about it after `searchain corpus use "
          f"{report.corpus}`")
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    return 0
