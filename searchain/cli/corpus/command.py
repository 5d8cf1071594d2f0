"""``searchain corpus ...``: add, list, info, index, remove, rebuild, export, import and pick the
active corpus (export and import run in ``transfer``, a Ray build in ``ray_build``)."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

from ...errors import Cancelled, CorpusError, SearchainError
from ...units import size
from . import get, transfer, update
from ..confirm import confirm
from ..progress import ProgressPrinter, cancel_on_interrupt

BUNDLE_SUFFIX = ".searchain-corpus"  # searchain.library.bundle_export.SUFFIX (not imported: keeps --help fast)
FORMAT_CHOICES = ("tsv", "jsonl", "hotpotqa", "musique", "mediawiki", "zim", "parquet", "folder",
                  "document")
SHOWN_PROBLEMS = 20


def register(sub) -> None:
    parser = sub.add_parser("corpus", help="manage local corpora")
    csub = parser.add_subparsers(dest="corpus_command", metavar="ACTION", required=True)

    p = csub.add_parser("add", help="ingest a source into a corpus (created if new) and index it")
    p.add_argument("name")
    p.add_argument("source", help="a file (TSV, JSONL, HotpotQA/MuSiQue JSONL, MediaWiki XML[.bz2]), a "
                   "document (PDF, Word .docx, OpenDocument .odt, HTML, EPUB, Markdown, text) or a "
                   "folder of documents")
    p.add_argument("--format", choices=FORMAT_CHOICES, help="skip format detection")
    p.add_argument("--no-index", action="store_true", help="store passages only; index later")
    p.add_argument("--yes", action="store_true", help="start a long index build without asking")
    p.add_argument("--workers", type=int, metavar="N",
                   help="processes parsing a dump, ZIM file or folder of documents (default: the "
                   "corpus.ingest_workers setting, 0 = auto: every core for over 8 MB)")
    p.add_argument("--json", action="store_true",
                   help="print the ingest report as one JSON object (passages, problems, ...) on stdout")
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
    p.add_argument("--yes", action="store_true", help="start a long index build without asking")
    p.set_defaults(func=cmd_rebuild)

    p = csub.add_parser("index", help="build or update a corpus's vector index from its stored "
                        "passages (continues a stopped build)")
    p.add_argument("name")
    p.add_argument("--rebuild", action="store_true",
                   help="discard the index and re-embed every passage (after changing the embedding model)")
    p.add_argument("--plan", action="store_true",
                   help="only say what the build would cost here (time per model, disk, memory)")
    p.add_argument("--json", action="store_true", help="with --plan: the plan as one JSON object")
    p.add_argument("--yes", action="store_true", help="start a build estimated at over an hour without asking")
    p.add_argument("--ray", metavar="auto|ADDRESS",
                   help="embed on a Ray cluster (the 'cluster' extra): auto joins the cluster this "
                        "machine belongs to or starts a local one; ADDRESS is HOST:PORT of its head")
    p.add_argument("--ray-workers", type=int, metavar="N",
                   help="embedding workers on Ray (default: one per GPU, else one per CPU)")
    p.set_defaults(func=cmd_index)

    p = csub.add_parser("use", help="make a corpus the active one")
    p.add_argument("name")
    p.set_defaults(func=cmd_use)

    p = csub.add_parser("export", help="write a corpus (passages, indexes, checksums) to one file "
                        "another machine can import")
    p.add_argument("name")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help=f"the file to write (a folder: NAME{BUNDLE_SUFFIX} in it)")
    p.add_argument("--overwrite", action="store_true", help="replace FILE if it exists")
    p.set_defaults(func=transfer.cmd_export)

    p = csub.add_parser("import", help="install a corpus file made by `corpus export` (checked first)")
    p.add_argument("file")
    p.add_argument("--as", dest="as_name", metavar="NEW",
                   help="the name to install it under (needed when its own name is taken)")
    p.set_defaults(func=transfer.cmd_import)

    get.register(csub)
    update.register(csub)


def _manager(ctx):
    from ...corpus.manager import CorpusManager

    return CorpusManager(ctx.paths, ctx.settings)


def cmd_add(ctx, args) -> int:
    manager = _manager(ctx)
    with cancel_on_interrupt() as cancel, ProgressPrinter() as show:
        try:
            report = manager.add(args.name, args.source, args.format, on_event=show, cancel=cancel,
                                 workers=_workers(args.workers))
        except CorpusError as exc:
            show.close()
            if args.json and getattr(exc, "report", None) is not None:
                # nothing could be read: still one object on stdout, naming every file's reason
                print(json.dumps({**report_json(args.name, exc.report), "error": exc.message},
                                 ensure_ascii=False))
            raise
        except BaseException:
            show.close()
            if manager.exists(args.name):
                print("note: passages stored so far are kept; run the same command again to "
                      "continue.", file=sys.stderr)
            raise
    if args.json:
        print(json.dumps(report_json(args.name, report), ensure_ascii=False))
    else:
        _print_report(args.name, report)
    if args.no_index:
        return 0
    if args.json:  # stdout holds the one JSON object: the index build reports on stderr
        with contextlib.redirect_stdout(sys.stderr):
            return _build_index(ctx, args.name, rebuild=False, assume_yes=args.yes)
    return _build_index(ctx, args.name, rebuild=False, assume_yes=args.yes)


def _workers(value: int | None) -> int | None:
    if value is not None and not 0 <= value <= 256:
        raise CorpusError(f"--workers must be 0 (auto) to 256; got {value}.",
                          hint="Pass the number of processes to parse with, e.g. --workers 4.")
    return value


def report_json(name: str, report) -> dict:
    """``corpus add --json``: ``passages`` added, and ``problems`` as ``{"file", "reason"}``
    (with ``line`` where a line is to blame), one per file or record that gave nothing."""
    return {"corpus": name, "passages": report.added, "duplicates": report.duplicates,
            "files": report.files, "ignored": report.ignored, "skipped": report.skipped,
            "problems": [{"file": p.file, "reason": p.reason, **({"line": p.line} if p.line else {})}
                         for p in report.problems],
            "seconds": round(report.seconds, 3)}


def cmd_rebuild(ctx, args) -> int:
    manager = _manager(ctx)
    with cancel_on_interrupt() as cancel, ProgressPrinter() as show:
        report = manager.rebuild(args.name, on_event=show, cancel=cancel)
    _print_report(args.name, report)
    if args.no_index:
        return 0
    return _build_index(ctx, args.name, rebuild=True, assume_yes=args.yes)


def cmd_index(ctx, args) -> int:
    # An unknown name fails in build_index's open_store, before any model loads, with the
    # manager's own message listing the corpora there are.
    _make_demo_if_missing(ctx, args.name)
    if args.plan:
        plan = _plan(ctx, args.name, rebuild=args.rebuild)
        print(json.dumps(plan.to_dict(), indent=2) if args.json else plan.summary())
        return 0
    if args.ray_workers is not None and not args.ray:
        raise SearchainError("--ray-workers needs --ray.", hint="Add --ray auto (or the cluster's address).")
    if args.ray:
        from .ray_build import index_on_ray

        return index_on_ray(ctx, args, _build_index)
    return _build_index(ctx, args.name, rebuild=args.rebuild, assume_yes=args.yes)


def _plan(ctx, name: str, *, rebuild: bool):
    """The build plan (a short calibration run the first time on this machine; progress shown)."""
    from ...index.build.plan import plan_build

    with cancel_on_interrupt() as cancel, ProgressPrinter() as show:
        return plan_build(ctx.paths, ctx.settings, name, rebuild=rebuild, on_event=show, cancel=cancel)


def _build_index(ctx, name: str, *, rebuild: bool, assume_yes: bool = False, embed_missing=None) -> int:
    try:
        from ...index.build.builder import build_index
    except ImportError as exc:
        print(f"error: passages stored, but the index builder is unavailable ({exc}); "
              f"search will not work until it is built.", file=sys.stderr)
        return 1
    # Say what it will cost before any long work starts; over an hour, ask first.
    from ...units import duration

    plan = _plan(ctx, name, rebuild=rebuild) if embed_missing is None else None  # this machine's costs
    if plan is not None and any(m.passages for m in plan.models):
        print(plan.summary(), file=sys.stderr)
        if plan.needs_confirmation and not confirm(
                f"Build the index of {name!r} (about {duration(plan.est_seconds)})?", assume_yes):
            print(f"note: not started; `searchain corpus index {name}` builds it later (until then "
                  "hybrid search of it uses keywords alone).", file=sys.stderr)
            return 1
    settings = ctx.settings
    if embed_missing is not None:
        # The cluster embeds (on the device retrieval.embed_device asks for there); this machine
        # only loads the model for its dimension, and may well have no GPU.
        from dataclasses import replace

        settings = replace(settings, retrieval=replace(settings.retrieval, embed_device="cpu"))
    with cancel_on_interrupt() as cancel, ProgressPrinter() as show:
        try:
            report = build_index(ctx.paths, settings, name, rebuild=rebuild, on_event=show,
                                 cancel=cancel, embed_missing=embed_missing)
        except (Cancelled, KeyboardInterrupt):
            show.close()
            print(f"note: finished embeddings are kept; `searchain corpus index {name}` continues "
                  "from them (until it is done, hybrid search of it uses keywords alone).",
                  file=sys.stderr)
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
    files = f" from {report.files:,} files" if report.files else ""
    print(f"{name}: added {report.added:,} passages{files} ({report.duplicates:,} duplicates, "
          f"{report.skipped:,} skipped, {report.ignored:,} left out) in {report.seconds:.1f}s")
    for problem in report.problems[:SHOWN_PROBLEMS]:
        print(f"  skipped {problem}", file=sys.stderr)
    if report.skipped > SHOWN_PROBLEMS:
        print(f"  ... and {report.skipped - SHOWN_PROBLEMS:,} more skipped records", file=sys.stderr)


def _listed(manager) -> list:
    """The corpora there are, and the demo corpus when it is not made yet: `search demo` and
    `ask` make it on first use, so it is there to use from the start."""
    from ...corpus.manager import NOT_MADE, CorpusInfo
    from ...library.demo import DEMO_NAME

    infos = manager.list()
    if any(i.name == DEMO_NAME for i in infos):
        return infos
    demo = CorpusInfo(name=DEMO_NAME, path=str(manager.corpus_dir(DEMO_NAME)), passages=None,
                      sources=[], formats=[], size_bytes=0, created="", state=NOT_MADE,
                      active=manager.active == DEMO_NAME, hint=DEMO_HINT)
    return sorted([*infos, demo], key=lambda i: i.name)


DEMO_HINT = ("made on first use (`searchain search demo QUERY`, `searchain ask`), or now with "
             "`searchain corpus index demo`")


def _make_demo_if_missing(ctx, name: str) -> None:
    """`corpus index demo` in a fresh home makes the demo corpus first (its passages only: the
    build that follows indexes it)."""
    from ...library.demo import DEMO_NAME, ensure_demo_corpus

    if name != DEMO_NAME or _manager(ctx).exists(name):
        return
    with cancel_on_interrupt() as cancel, ProgressPrinter() as show:
        ensure_demo_corpus(ctx.paths, ctx.settings, on_event=show, cancel=cancel, index=False)


def cmd_list(ctx, args) -> int:
    infos = _listed(_manager(ctx))
    if args.json:
        print(json.dumps([i.to_dict() for i in infos], indent=2))
        return 0
    print(f"  {'NAME':<24} {'PASSAGES':>10} {'INDEXED':>10} {'SIZE':>9}  {'STATE':<10} FORMATS")
    for i in infos:
        mark = "*" if i.active else " "
        indexed = "-" if i.indexed is None else f"{i.indexed:,}"
        made = i.state != "not made"
        name = i.name if made else f"{i.name} (made on first use)"
        print(f"{mark} {name:<24} {_count(i.passages) if made else '-':>10} {indexed:>10} "
              f"{size(i.size_bytes) if made else '-':>9}  {i.state:<10} {','.join(i.formats)}")
    for i in infos:
        if i.hint and i.state != "not made":
            print(f"note: {i.name} is {i.state}: {i.hint}", file=sys.stderr)
    if all(i.state == "not made" for i in infos):
        print("add a corpus of your own: searchain corpus add NAME SOURCE")
    return 0


def _count(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"  # None: the store could not be read


def _second_index_meta(corpus_dir):
    """The second embedding model's index record, if the corpus has one (built earlier, even if
    the model is turned off now)."""
    from ...errors import IndexError_
    from ...index.layout import IndexLayout, IndexMeta

    layout = IndexLayout(Path(corpus_dir) / "index").second
    if not layout.meta_file.is_file():
        return None
    try:
        return IndexMeta.read(layout.meta_file, Path(corpus_dir).name)
    except IndexError_:
        return None


def cmd_info(ctx, args) -> int:
    manager = _manager(ctx)
    pending = [i for i in _listed(manager) if i.name == args.name and i.state == "not made"]
    if pending:  # the demo before its first use
        if args.json:
            print(json.dumps(pending[0].to_dict(), indent=2))
        else:
            print(f"name:      {args.name}{'  (active)' if pending[0].active else ''}")
            print(f"state:     not made yet: {DEMO_HINT}")
        return 0
    info = manager.info(args.name)
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
    if info.hint:
        print(f"           {info.hint}")
    print(f"passages:  {_count(info.passages)}")
    print(f"indexed:   {'-' if info.indexed is None else f'{info.indexed:,}'}"
          f"{'  (' + info.embedder + ')' if info.embedder else ''}")
    if second is not None:
        print(f"2nd model: {second.count:,}  ({second.embedder})")
    if index is not None:
        print(f"index:     {index.state}  {index.message}")
        if index.hint:
            print(f"           {index.hint}")
    print(f"size:      {size(info.size_bytes)}")
    print(f"created:   {info.created}")
    print(f"folder:    {info.path}")
    for s in info.source_details:
        counts = "" if "added" not in s else (f"  added {s['added']:,}, duplicates {s['duplicates']:,}, "
                                              f"skipped {s['skipped']:,}")
        print(f"source:    [{s['format']}] {s['path']}  ({s['status']}){counts}")
    if info.state == "incomplete":
        print("note: an ingest was interrupted; run `searchain corpus add` with the same source "
              "to continue, or `searchain corpus rebuild` to start over.")
    if info.last_update.get("status") == "running" and info.state != "ingesting":
        source = info.last_update.get("from") or "its folders"
        print(f"note: an update from {source} was stopped; run `searchain corpus update "
              f"{info.name}` to continue it.")
    return 0


def _index_status(ctx, name: str):
    """The index's state for ``info``, or None when the passage store itself cannot be read."""
    from ...errors import SearchainError
    from ...index.status import listing_status

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
