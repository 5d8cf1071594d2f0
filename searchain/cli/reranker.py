"""``searchain reranker pull|status|use``: the optional cross-encoder that re-ranks retrieval."""

from __future__ import annotations

import json
import sys


def register(sub) -> None:
    from ..index.cross_encoder import DEFAULT_RERANKER

    parser = sub.add_parser("reranker", help="the optional cross-encoder re-ranker (download, status, use)")
    rsub = parser.add_subparsers(dest="reranker_command", metavar="ACTION", required=True)
    p = rsub.add_parser("pull", help=f"download a cross-encoder (default {DEFAULT_RERANKER}); needs a network once")
    p.add_argument("--name", default=DEFAULT_RERANKER, help="Hugging Face repo of a cross-encoder")
    p.add_argument("--use", action="store_true", help="also turn re-ranking on with it")
    p.set_defaults(func=handle_pull)
    p = rsub.add_parser("status", help="the re-ranker setting and the installed re-rankers")
    p.set_defaults(func=handle_status)
    p = rsub.add_parser("use", help="re-rank with NAME (installed, or a folder), or 'none' to stop")
    p.add_argument("name", help="an installed re-ranker, a folder, or 'none'")
    p.add_argument("--depth", type=int, help="candidates to re-rank per query (default: keep, 20)")
    p.set_defaults(func=handle_use)


def handle_pull(ctx, args) -> int:
    from ..index.cross_encoder import download_reranker

    def progress(event) -> None:
        print(f"{event.stage}: {event.done}/{event.total or '?'} {event.message}", file=sys.stderr)

    print(download_reranker(ctx.paths, args.name, on_event=progress))
    if args.use:
        return _use(ctx, args.name, None)
    return 0


def handle_status(ctx, args) -> int:
    from ..index.cross_encoder import installed_rerankers

    r = ctx.settings.retrieval
    print(json.dumps({"reranker": r.reranker or None, "rerank_depth": r.rerank_depth,
                      "installed": installed_rerankers(ctx.paths),
                      "folder": str(ctx.paths.models_dir / "rerankers")}, indent=2))
    return 0


def handle_use(ctx, args) -> int:
    return _use(ctx, args.name, args.depth)


def _use(ctx, name: str, depth: int | None) -> int:
    from ..errors import ConfigError
    from ..index.cross_encoder import resolve_reranker

    r = ctx.settings.retrieval
    if depth is not None:
        if depth < 1:
            raise ConfigError(f"--depth must be at least 1, got {depth}.")
        r.rerank_depth = depth
    if name.strip().lower() == "none":
        r.reranker = ""
        ctx.save_settings()
        print("Re-ranking is off.")
        return 0
    found = resolve_reranker(name, ctx.paths.models_dir)  # refuse what would fail at every search
    installed = ctx.paths.models_dir / "rerankers" / name
    # An installed name stays a name; a folder given by hand is kept absolute, since a relative
    # path would depend on where the app is started from.
    r.reranker = name if found == installed else str(found.resolve())
    ctx.save_settings()
    print(f"Re-ranking the top {r.rerank_depth} candidates with {r.reranker}.")
    return 0
