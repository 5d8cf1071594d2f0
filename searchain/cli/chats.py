"""``searchain chats ...``: list, show, search, rename, delete, export and import saved chats.

The store lives at ``ctx.paths.conversations_db``. Output is plain text for people, or JSON
(``--json``) for scripts; errors are ``StoreError``s that ``main`` prints.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict

from .confirm import confirm


def register(sub) -> None:
    parser = sub.add_parser("chats", help="saved conversations: list, show, search, export ...")
    chats = parser.add_subparsers(dest="chats_command", metavar="ACTION", required=True)

    p = chats.add_parser("list", help="saved conversations, newest first")
    p.add_argument("--limit", type=int, default=None, help="show at most this many")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=_list)

    p = chats.add_parser("show", help="one conversation with its answers and references")
    p.add_argument("id", type=int)
    p.add_argument("--json", action="store_true", help="print the JSON export of it")
    p.set_defaults(func=_show)

    p = chats.add_parser("search", help="full-text search over all messages")
    p.add_argument("text")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_search)

    p = chats.add_parser("rename", help="give a conversation a new title")
    p.add_argument("id", type=int)
    p.add_argument("title")
    p.set_defaults(func=_rename)

    p = chats.add_parser("delete", help="delete a conversation and everything in it")
    p.add_argument("id", type=int)
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.set_defaults(func=_delete)

    p = chats.add_parser("export", help="write conversations as Markdown or JSON")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("id", type=int, nargs="?", help="the conversation to export")
    which.add_argument("--all", action="store_true", help="export every conversation")
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.add_argument("-o", "--output", help="file to write (default: standard output)")
    p.set_defaults(func=_export)

    p = chats.add_parser("import", help="add the conversations of a JSON export")
    p.add_argument("path")
    p.set_defaults(func=_import)

    p = chats.add_parser("reset", help="set the conversation database aside and start empty")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.set_defaults(func=_reset)


def _open(ctx):
    from ..store import ConversationStore

    return ConversationStore.open(ctx.paths.conversations_db)


def _list(ctx, args) -> int:
    with _open(ctx) as store:
        summaries = store.list_conversations(limit=args.limit)
    if args.json:
        print(json.dumps([asdict(s) for s in summaries], ensure_ascii=False, indent=1))
        return 0
    if not summaries:
        print("No saved conversations.")
        return 0
    for s in summaries:
        preview = s.preview.replace("\n", " ")
        print(f"{s.id:>6}  {s.updated_at[:16].replace('T', ' ')}  {s.message_count:>4} msgs  "
              f"{s.title}" + (f"  — {preview[:60]}" if preview else ""))
    return 0


def _show(ctx, args) -> int:
    with _open(ctx) as store:
        if args.json:
            print(json.dumps(store.export_json([args.id]), ensure_ascii=False, indent=1))
        else:
            print(store.export_markdown(args.id), end="")
    return 0


def _search(ctx, args) -> int:
    with _open(ctx) as store:
        hits = store.search(args.text, limit=args.limit)
    if args.json:
        print(json.dumps([asdict(h) for h in hits], ensure_ascii=False, indent=1))
        return 0
    if not hits:
        print(f"No messages match {args.text!r}.")
        return 0
    for h in hits:
        snippet = h.snippet.replace("\n", " ")
        print(f"chat {h.conversation_id} ({h.conversation_title}), message {h.message_id} "
              f"[{h.role}]: {snippet}")
    return 0


def _rename(ctx, args) -> int:
    with _open(ctx) as store:
        store.rename(args.id, args.title)
    print(f"Renamed conversation {args.id}.")
    return 0


def _delete(ctx, args) -> int:
    with _open(ctx) as store:
        title = store.get_conversation(args.id).title
        if not confirm(f"Delete conversation {args.id} ({title!r}) and all its messages?",
                        args.yes):
            print("Nothing deleted.")
            return 1
        store.delete(args.id)
    print(f"Deleted conversation {args.id}.")
    return 0


def _export(ctx, args) -> int:
    ids = None if args.all else [args.id]
    with _open(ctx) as store:
        if args.output:
            if args.format == "md":
                path = store.export_markdown_file(args.output, ids)
            else:
                path = store.export_json_file(args.output, ids)
            print(f"Wrote {path}", file=sys.stderr)
            return 0
        if args.format == "md":
            print(store.export_markdown_many(ids), end="")
        else:
            print(json.dumps(store.export_json(ids), ensure_ascii=False, indent=1))
    return 0


def _import(ctx, args) -> int:
    with _open(ctx) as store:
        ids = store.import_json_file(args.path)
    print(f"Imported {len(ids)} conversation(s): " + ", ".join(str(i) for i in ids))
    return 0


def _reset(ctx, args) -> int:
    from ..store.connection import set_aside

    path = ctx.paths.conversations_db
    if not path.exists():
        print(f"No conversation database at {path}; nothing to reset.")
        return 0
    if not confirm(f"Set {path} aside and start with no saved conversations?", args.yes):
        print("Nothing changed.")
        return 1
    kept = set_aside(path)
    print(f"Moved the old database to {kept}; SearChain starts with an empty history.")
    return 0
