"""``searchain corpus ...``: add, list, info, index, remove, rebuild and pick the active corpus."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..errors import Cancelled, CorpusError
from .confirm import confirm
from .progress import ProgressPrinter, cancel_on_interrupt

FORMAT_CHOICES = ("tsv", "jsonl", "hotpotqa", "musique", "mediawiki", "folder")
SHOWN_PROBLEMS = 20


def register(sub) -> None:
    parser = sub.add_parser("corpus", help="manage local corpora")
    csub = parser.add_subparsers(dest="corpus_command", metavar="ACTION", required=True)

    p = csub.add_parser("add", help="ingest a source into a corpus (created if new) and index it")
    p.add_argument("name")
    p.add_argument("source", help="a file (TSV, JSONL, HotpotQA/MuSiQue JSONL, MediaWiki XML[.bz2]) or a folder")
    p.add_argument("--format", choices=FORMAT_CHOICES, help="skip format detection")
    p.add_argument("--no-index", action="store_true", help="store passages only; index later")
    p.set_defaults(func=cmd_add)

    p = csub.add_parser("list", help="list corpora")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_list)

    p = csub.add_parser("info", help="details of one corpus")
    p.add_argument("name")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_info)

    p = csub.add_parser("remove", help="delete a corpus and its index")
    p.add_argument("name")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.set_defaults(func=cmd_remove)

    p = csub.add_parser("rebuild", help="re-read a corpus from its recorded sources")
    p.add_argument("name")
    p.add_argument("--no-index", action="store_true")
    p.set_defaults(func=cmd_rebuild)

    p = csub.add_parser("index", help="build or update a corpus's vector index from its stored "
                        "passages (continues a stopped build)")
    p.add_argument("name")
    p.add_argument("--rebuild", action="store_true",
                   help="discard the index and re-embed every passage (after changing the embedding model)")
    p.set_defaults(func=cmd_index)

    p = csub.add_parser("use", help="make a corpus the active one")
    p.add_argument("name")
    p.set_defaults(func=cmd_use)


def _manager(ctx):
    from ..corpus.manager import CorpusManager

    return CorpusManager(ctx.paths, ctx.settings)


def cmd_add(ctx, args) -> int:
    manager = _manager(ctx)
    with cancel_on_interrupt() as cancel, ProgressPrinter() as show:
        try:
            report = manager.add(args.name, args.source, args.format, on_event=show, cancel=cancel)
        except BaseException:
            show.close()
            if manager.exists(args.name):
                print("note: passages stored so far are kept; run the same command again to "
                      "continue.", file=sys.stderr)
            raise
    _print_report(args.name, report)
    if args.no_index:
        return 0
    return _build_index(ctx, args.name, rebuild=False)


def cmd_rebuild(ctx, args) -> int:
    manager = _manager(ctx)
    with cancel_on_interrupt() as cancel, ProgressPrinter() as show:
        report = manager.rebuild(args.name, on_event=show, cancel=cancel)
    _print_report(args.name, report)
    if args.no_index:
        return 0
    return _build_index(ctx, args.name, rebuild=True)


def cmd_index(ctx, args) -> int:
    # An unknown name fails in build_index's open_store, before any model loads, with the
    # manager's own message listing the corpora there are.
    return _build_index(ctx, args.name, rebuild=args.rebuild)


def _build_index(ctx, name: str, *, rebuild: bool) -> int:
    try:
        from ..index.builder import build_index
    except ImportError as exc:
        print(f"error: passages stored, but the index builder is unavailable ({exc}); "
              f"search will not work until it is built.", file=sys.stderr)
        return 1
    with cancel_on_interrupt() as cancel, ProgressPrinter() as show:
        try:
            report = build_index(ctx.paths, ctx.settings, name, rebuild=rebuild, on_event=show,
                                 cancel=cancel)
        except (Cancelled, KeyboardInterrupt):
            show.close()
            print(f"note: finished embeddings are kept; `searchain corpus index {name}` continues "
                  "from them.", file=sys.stderr)
            raise
    reused = f", {report.reused:,} reused" if report.reused else ""
    second = (f"; second model {report.second_embedder}: {report.second_embedded:,} embedded"
              if report.second_embedder else "")
    precision = ", bfloat16" if report.embed_precision == "bf16" and report.embedded else ""
    print(f"{name}: index ready, {report.total:,} passages ({report.embedded:,} embedded{reused}"
          f"{second}) in {report.total_s:.1f}s{precision}")
    if report.second_problem:
        print(f"warning: no index for the second embedding model: {report.second_problem}",
              file=sys.stderr)
    return 0


def _print_report(name: str, report) -> None:
    print(f"{name}: added {report.added:,} passages ({report.duplicates:,} duplicates, "
          f"{report.skipped:,} skipped, {report.ignored:,} left out) in {report.seconds:.1f}s")
    for problem in report.problems[:SHOWN_PROBLEMS]:
        print(f"  skipped {problem}", file=sys.stderr)
    if report.skipped > SHOWN_PROBLEMS:
        print(f"  ... and {report.skipped - SHOWN_PROBLEMS:,} more skipped records", file=sys.stderr)


def cmd_list(ctx, args) -> int:
    infos = _manager(ctx).list()
    if args.json:
        print(json.dumps([i.to_dict() for i in infos], indent=2))
        return 0
    if not infos:
        print("no corpora yet: searchain corpus add NAME SOURCE")
        return 0
    print(f"  {'NAME':<24} {'PASSAGES':>10} {'INDEXED':>10} {'SIZE':>9}  {'STATE':<10} FORMATS")
    for i in infos:
        mark = "*" if i.active else " "
        indexed = "-" if i.indexed is None else f"{i.indexed:,}"
        print(f"{mark} {i.name:<24} {i.passages:>10,} {indexed:>10} {_size(i.size_bytes):>9}  "
              f"{i.state:<10} {','.join(i.formats)}")
    return 0


def _second_index_meta(corpus_dir):
    """The second embedding model's index record, if the corpus has one (built earlier, even if
    the model is turned off now)."""
    from ..errors import IndexError_
    from ..index.layout import IndexLayout, IndexMeta

    layout = IndexLayout(Path(corpus_dir) / "index").second
    if not layout.meta_file.is_file():
        return None
    try:
        return IndexMeta.read(layout.meta_file, Path(corpus_dir).name)
    except IndexError_:
        return None


def cmd_info(ctx, args) -> int:
    info = _manager(ctx).info(args.name)
    index = _index_status(ctx, args.name)
    second = _second_index_meta(info.path)
    if args.json:
        data = info.to_dict()
        if index is not None:
            data["index"] = {"state": index.state, "message": index.message, "hint": index.hint}
        if second is not None:
            data["second_index"] = {"embedder": second.embedder, "count": second.count}
        print(json.dumps(data, indent=2))
        return 0
    print(f"name:      {info.name}{'  (active)' if info.active else ''}")
    print(f"state:     {info.state}{'  ' + info.problem if info.problem else ''}")
    print(f"passages:  {info.passages:,}")
    print(f"indexed:   {'-' if info.indexed is None else f'{info.indexed:,}'}"
          f"{'  (' + info.embedder + ')' if info.embedder else ''}")
    if second is not None:
        print(f"2nd model: {second.count:,}  ({second.embedder})")
    if index is not None:
        print(f"index:     {index.state}  {index.message}")
        if index.hint:
            print(f"           {index.hint}")
    print(f"size:      {_size(info.size_bytes)}")
    print(f"created:   {info.created}")
    print(f"folder:    {info.path}")
    for s in info.source_details:
        counts = "" if "added" not in s else (f"  added {s['added']:,}, duplicates {s['duplicates']:,}, "
                                              f"skipped {s['skipped']:,}")
        print(f"source:    [{s['format']}] {s['path']}  ({s['status']}){counts}")
    if info.state == "incomplete":
        print("note: an ingest was interrupted; run `searchain corpus add` with the same source "
              "to continue, or `searchain corpus rebuild` to start over.")
    return 0


def _index_status(ctx, name: str):
    """The index's state for ``info``, or None when the passage store itself cannot be read."""
    from ..errors import SearchainError
    from ..index.status import listing_status

    try:
        return listing_status(ctx.paths, ctx.settings, name)
    except SearchainError:
        return None  # a damaged passage store is already reported as the corpus's state


def cmd_remove(ctx, args) -> int:
    manager = _manager(ctx)
    if not manager.exists(args.name) and not manager.corpus_dir(args.name).exists():
        raise CorpusError(f"There is no corpus named {args.name!r}.")
    if not confirm(f"Remove corpus {args.name!r} and its index?", args.yes):
        print("kept")
        return 1
    manager.remove(args.name)
    print(f"removed {args.name}; active corpus: {manager.active}")
    return 0


def cmd_use(ctx, args) -> int:
    _manager(ctx).set_active(args.name)
    print(f"active corpus: {args.name}")
    return 0


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)
