"""``searchain search NAME[,NAME...] "query" [-k 5] [--json] [--retriever dense|bm25|hybrid] [--reranker NAME|none]``.

Several corpora (``wiki,papers``) are searched together (``index/mixed.py``); each hit names its
corpus."""

from __future__ import annotations

import json
import sys
import textwrap

from .progress import ProgressPrinter, cancel_on_interrupt


def register(sub) -> None:
    p = sub.add_parser("search", help="retrieve the passages of a corpus that best match a query")
    p.add_argument("name", help="corpus name (see: searchain corpus list), or several separated by "
                                "commas to search them together: wiki,papers")
    p.add_argument("query", help="what to search for")
    p.add_argument("-k", type=int, default=5, help="how many passages (default 5)")
    p.add_argument("--retriever", choices=("dense", "bm25", "hybrid"),
                   help="retrieval method (default: the retrieval.retriever setting)")
    p.add_argument("--reranker", metavar="NAME|PATH|none",
                   help="cross-encoder to re-rank with, or 'none' (default: the retrieval.reranker "
                        "setting; see `searchain reranker`)")
    p.add_argument("--json", action="store_true", help="print the hits as one JSON object")
    p.set_defaults(func=run)


def run(ctx, args) -> int:
    from ..errors import SearchainError
    from ..index.mixed import parse_corpora
    from ..index.retrievers import KeywordOnly, finish_keyword_indexes, keyword_only, open_retriever

    if args.k < 1:
        raise SearchainError(f"-k must be at least 1, got {args.k}.")
    if not args.query.strip():
        raise SearchainError("The query is empty.", hint='Pass the text to search for, e.g. "capital of France".')
    names = parse_corpora(args.name)
    if args.reranker is not None:
        ctx.settings.retrieval.reranker = "" if args.reranker.strip().lower() == "none" else args.reranker
    kind = (args.retriever or ctx.settings.retrieval.retriever).strip().lower()
    embedder = None
    if kind != "bm25":
        from ..index.embed.embedder import Embedder

        embedder = Embedder.for_settings(ctx.settings.retrieval,
                                         models_dir=ctx.paths.models_dir)  # loads on first use
    if "demo" in names:  # as in the app: the shipped demo corpus is built on first use
        _ensure_demo(ctx, embedder)
    # A keyword index a stopped ingest left is finished first, with progress; Ctrl+C stops it
    # between ranges and keeps what was indexed.
    with ProgressPrinter() as printer, cancel_on_interrupt() as cancel:
        finish_keyword_indexes(ctx.paths, ctx.settings, names, on_event=printer, cancel=cancel)
    waiting = keyword_only(ctx.paths, ctx.settings, names, args.retriever)
    retriever = open_retriever(ctx.paths, ctx.settings, names, args.retriever, embedder=embedder)
    for name in waiting:
        note = KeywordOnly(name)
        print(f"note: {note.message} {note.hint}", file=sys.stderr)
    hits = retriever.search(args.query, args.k)
    if args.json:
        print(json.dumps({
            "corpus": ",".join(names), "corpora": names, "query": args.query, "retriever": retriever.name,
            "keyword_only": waiting,
            "hits": [_hit_json(n, h) for n, h in enumerate(hits, start=1)],
        }, ensure_ascii=False))
        return 0
    if not hits:
        print(f"No passages in '{', '.join(names)}' match {args.query!r}.")
        return 0
    for n, h in enumerate(hits, start=1):
        pid = f"{h.passage.corpus}:{h.passage.pid}" if len(names) > 1 else h.passage.pid
        print(f"[{n}] {h.passage.title or '(untitled)'}  ({h.retriever} {h.score:.3f}, {pid})")
        where = [x for x in (h.passage.location(), h.passage.url) if x]
        if where:
            print("    " + " · ".join(where))
        print(textwrap.indent(textwrap.shorten(h.passage.text, 400, placeholder=" ..."), "    "))
    return 0


def _hit_json(rank: int, hit) -> dict:
    """One hit as JSON, naming its ``corpus``; ``url`` (ZIM, dumps), ``page`` (1-based) and ``section`` (the heading
    path) only where the source gave them."""
    p = hit.passage
    out = {"rank": rank, "score": round(hit.score, 6), "retriever": hit.retriever, "corpus": p.corpus,
           "pid": p.pid,
           "title": p.title, "text": p.text, "source": p.source, "doc_id": p.doc_id,
           "start": p.start, "end": p.end}
    if p.url:
        out["url"] = p.url
    if p.page is not None:
        out["page"] = p.page
    if p.section:
        out["section"] = p.section
    return out


def _ensure_demo(ctx, embedder) -> None:
    from ..library.demo import ensure_demo_corpus

    with cancel_on_interrupt() as cancel, ProgressPrinter() as show:
        ensure_demo_corpus(ctx.paths, ctx.settings, on_event=show, cancel=cancel,
                           index=embedder is not None, embedder=embedder)

