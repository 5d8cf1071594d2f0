"""``searchain bench ingest``: corpus ingestion speed (parse only vs full ingest), see
``searchain.bench.ingest.measure``."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("ingest", help="corpus ingestion throughput: parsing vs. full ingest into SQLite+FTS5")
    p.add_argument("--passages", type=int, default=20000, help="synthetic TSV passages (the dump gets a fifth as many pages)")
    p.add_argument("--repeats", type=int, default=3, help="runs per source; medians are reported")
    p.add_argument("--rss-sizes", default="", help="instead: peak RSS of ingesting generated dumps "
                   "of these sizes, e.g. 20000,100000,400000 (flat in N)")
    p.add_argument("--json", action="store_true", help="accepted for symmetry: the output is always JSON")
    p.set_defaults(func=handle)


def handle(ctx, args) -> int:
    from .measure import main

    return main(["--passages", str(args.passages), "--repeats", str(args.repeats),
                 "--rss-sizes", args.rss_sizes])
