"""``searchain corpus update NAME [--from SOURCE]``: a folder corpus re-synced with its folders,
or a corpus brought to a newer snapshot of its source; only what changed is re-read and
re-embedded (``searchain.library.update``). The cost is said first; over an hour, it asks."""

from __future__ import annotations

import json
import sys

from ...errors import Cancelled, CorpusError
from ..confirm import confirm
from ..progress import ProgressPrinter, cancel_on_interrupt

SHOWN_NAMES = 20


def register(csub) -> None:
    p = csub.add_parser("update", help="bring a corpus up to date: re-sync its folders, or update it "
                        "from a newer snapshot (--from); only what changed is re-read and re-embedded")
    p.add_argument("name")
    p.add_argument("--from", dest="source", metavar="SOURCE",
                   help="the newer snapshot of the corpus's one source (a MediaWiki dump, a ZIM "
                        "file, TSV or JSON lines); without it, folders re-sync and a file is re-read")
    p.add_argument("--format", help="the format of SOURCE (skips detection)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="processes parsing a dump, ZIM or parquet snapshot (default: the "
                        "corpus.ingest_workers setting; 0 = auto)")
    p.add_argument("--plan", action="store_true", help="only say what the update would cost here")
    p.add_argument("--no-index", action="store_true", help="update the passages only; index later")
    p.add_argument("--yes", action="store_true", help="start an update estimated at over an hour without asking")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object (unchanged, changed, added, removed, passages_embedded, ...)")
    p.set_defaults(func=cmd_update)


def cmd_update(ctx, args) -> int:
    from ...library.update import plan_update, update_and_index
    from ...units import duration
    if args.workers is not None and not 0 <= args.workers <= 256:
        raise CorpusError(f"--workers must be 0 (auto) to 256; got {args.workers}.",
                          hint="Pass the number of processes to parse with, e.g. --workers 4.")

    with cancel_on_interrupt() as cancel, ProgressPrinter() as show:
        plan = plan_update(ctx.paths, ctx.settings, args.name, args.source, args.format,
                           on_event=show, cancel=cancel)
    if args.plan:
        print(json.dumps(plan.to_dict(), indent=2) if args.json else plan.summary())
        return 0
    print(plan.summary(), file=sys.stderr)
    if plan.needs_confirmation and not confirm(
            f"Update {args.name!r} (about {duration(plan.est_seconds)})?", args.yes):
        print("note: not started.", file=sys.stderr)
        return 1
    with cancel_on_interrupt() as cancel, ProgressPrinter() as show:
        try:
            report = update_and_index(ctx.paths, ctx.settings, args.name, args.source, args.format,
                                      index=False if args.no_index else None, on_event=show,
                                      cancel=cancel, workers=args.workers)
        except (Cancelled, KeyboardInterrupt):
            show.close()
            print(f"note: what was updated is kept and consistent; `searchain corpus update "
                  f"{args.name}` continues.", file=sys.stderr)
            raise
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False))
        return 0
    print(report.summary() + (f"; {report.passages_embedded:,} passages embedded"
                              if report.index else ""))
    for kind in ("changed", "added", "removed"):
        names = getattr(report, f"{kind}_names")
        for name in names[:SHOWN_NAMES]:
            print(f"  {kind}: {name}")
        if getattr(report, kind) > SHOWN_NAMES:
            print(f"  ... and {getattr(report, kind) - SHOWN_NAMES:,} more {kind}")
    for problem in report.problems[:SHOWN_NAMES]:
        print(f"  skipped {problem}", file=sys.stderr)
    return 0
