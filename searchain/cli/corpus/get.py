"""``searchain corpus get wikipedia``: a Wikipedia snapshot downloaded, checked, ingested and
indexed in one resumable job (``searchain.library.wikipedia``); ``--plan`` says what it will
cost here, and work over an hour asks first."""

from __future__ import annotations

import json
import sys

from ...errors import Cancelled
from ..confirm import confirm
from ..progress import ProgressPrinter, cancel_on_interrupt

SOURCE_CHOICES = ("hub", "dump")


def register(csub) -> None:
    p = csub.add_parser("get", help="download a ready-made corpus (Wikipedia), check it, ingest and "
                        "index it in one resumable step")
    p.add_argument("what", choices=("wikipedia",))
    p.add_argument("--lang", default="simple",
                   help="Wikipedia language: simple (Simple English, ~0.3 GB, the default), en "
                        "(English, ~12-22 GB), or another code")
    p.add_argument("--source", choices=SOURCE_CHOICES, default="hub",
                   help="hub: the wikimedia/wikipedia parquet files on the Hugging Face Hub "
                        "(clean text; default); dump: the XML dump from dumps.wikimedia.org")
    p.add_argument("--snapshot", metavar="YYYYMMDD",
                   help="the snapshot (default: a pinned one, 20231101; dumps.wikimedia.org keeps "
                        "only recent dumps)")
    p.add_argument("--revision", metavar="COMMIT",
                   help="the Hub commit to fetch (default: the dataset's main at the first run, "
                        "then recorded)")
    p.add_argument("--name", help="the corpus name (default: wikipedia-LANG)")
    p.add_argument("--plan", action="store_true",
                   help="only print what it will cost here (download, disk, memory, time per "
                        "stage); fetches the file list only")
    p.add_argument("--json", action="store_true", help="the plan (or the result) as one JSON object")
    p.add_argument("--yes", action="store_true", help="start work estimated at over an hour without asking")
    p.set_defaults(func=cmd_get)


def cmd_get(ctx, args) -> int:
    from ...library import WikipediaChoice, get_wikipedia, plan_wikipedia

    choice = WikipediaChoice(args.lang, args.source, args.snapshot, args.revision, args.name)
    plan, release = plan_wikipedia(ctx.paths, ctx.settings, choice)
    if args.plan:
        print(json.dumps(plan.to_dict(), indent=2) if args.json else plan.summary())
        return 0
    print(plan.summary(), file=sys.stderr)
    if plan.needs_confirmation and not confirm(
            f"Get Wikipedia ({choice.lang}) as {choice.corpus!r} (about "
            f"{_duration(plan.est_seconds)})?", args.yes):
        print("note: not started.", file=sys.stderr)
        return 1
    with cancel_on_interrupt() as cancel, ProgressPrinter() as show:
        try:
            report = get_wikipedia(ctx.paths, ctx.settings, choice, release=release,
                                   on_event=show, cancel=cancel)
        except (Cancelled, KeyboardInterrupt):
            show.close()
            print("note: what is done is kept (downloads, passages, embeddings); run the same "
                  "command again to continue.", file=sys.stderr)
            raise
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False))
    else:
        print(f"{report.corpus}: ready, {report.passages:,} passages, {report.indexed:,} indexed "
              f"(now the active corpus); downloads kept in {report.job}")
    return 0


def _duration(seconds: float) -> str:
    from ...units import duration

    return duration(seconds)
