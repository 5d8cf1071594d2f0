"""``searchain bench ingest``: corpus ingestion speed (parse only vs full ingest), see
``searchain.bench.ingest.measure``; with ``--source FILE --workers 1,2,...``: one dump or ZIM
file with N worker processes against wikiextractor (``searchain.bench.ingest.workers``)."""

from __future__ import annotations

from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("ingest", help="corpus ingestion throughput: parsing vs. full ingest into SQLite+FTS5, "
                       "or a dump with N worker processes (--source, --workers)")
    p.add_argument("--passages", type=int, default=20000, help="synthetic TSV passages (the dump gets a fifth as many pages)")
    p.add_argument("--repeats", type=int, default=3, help="runs per source; medians are reported")
    p.add_argument("--rss-sizes", default="", help="instead: peak RSS of ingesting generated dumps "
                   "of these sizes, e.g. 20000,100000,400000 (flat in N)")
    p.add_argument("--source", type=Path, help="instead: this dump (.xml, .xml.bz2, multistream with its "
                   "index beside it) or ZIM file, ingested with each --workers count")
    p.add_argument("--workers", default="1,2", help="with --source: worker counts, e.g. 1,2,4 (default 1,2)")
    p.add_argument("--no-wikiextractor", action="store_true",
                   help="with --source: do not time wikiextractor on the same dump")
    p.add_argument("--wikiextractor-workers", default="",
                   help="with --source: time wikiextractor at these process counts only (default: each --workers)")
    p.add_argument("--writer-watch", choices=("on", "off", "both"), default="on",
                   help="with --source: the writer's watch that may defer the keyword index mid-ingest "
                        "(fts_build.WriterWatch); both: each worker count without it, then with it")
    p.add_argument("--json", action="store_true", help="accepted for symmetry: the output is always JSON")
    p.set_defaults(func=handle)


def handle(ctx, args) -> int:
    if args.source is not None:
        import json

        from ...errors import SearchainError
        from .workers import measure, parse_workers

        if not args.source.is_file():
            raise SearchainError(f"{args.source} is not a file.", hint="Pass a dump or a ZIM file.")
        result = measure(args.source, parse_workers(args.workers), max(1, args.repeats),
                         wikiextractor=not args.no_wikiextractor,
                         wikiextractor_counts=parse_workers(args.wikiextractor_workers)
                         if args.wikiextractor_workers else None, writer_watch=args.writer_watch)
        print(json.dumps(result, indent=1))
        return 0
    from .measure import main

    return main(["--passages", str(args.passages), "--repeats", str(args.repeats),
                 "--rss-sizes", args.rss_sizes])
