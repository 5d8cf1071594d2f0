"""Bring a tantivy keyword index up to date with its store without rebuilding it (#33 item 5):
see ``tantivy_index``'s docstring. A ``corpus update`` where 1 % of the articles changed deletes
and adds about 1 % of the documents here, where a rebuild would index all of them again."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ...errors import IndexError_
from .tantivy_schema import (FORMAT, STAMP, WRITER_HEAP, _open_index, _tantivy, read_stamp,
                             store_stamp, title_repeat, writer_threads)

REBUILD_DELETED_SHARE = 0.10  # deleted since the last full build, of the docs it indexed: rebuild
DELETE_BATCH = 50_000  # ids per deletion query
BUILD_BATCH = 5000  # passages read from the store per step


def extendable(path: Path, conn, title_weight: float) -> dict | None:
    """The stamp of an index at ``path`` that ``extend`` may bring up to date: readable, of
    this format and title weight, with few enough documents deleted since its full build."""
    try:
        stamp = read_stamp(path)
    except IndexError_:
        return None
    if not stamp or stamp.get("format") != FORMAT or \
            stamp.get("title_repeat") != title_repeat(title_weight) or \
            not isinstance(stamp.get("max_id"), int) or not isinstance(stamp.get("passages"), int):
        return None
    indexed = stamp.get("built_with", stamp["passages"])
    if stamp.get("deleted", 0) > REBUILD_DELETED_SHARE * max(indexed, 1):
        return None
    return stamp


def extend(conn, path: Path, old: dict, *, title_weight: float = 2.0, progress=None,
           cancel=None, heap: int = WRITER_HEAP) -> dict:
    """Bring the index at ``path``, built (or extended) when the store matched ``old``, to the
    store: delete the documents of passages gone since (ids up to ``old["max_id"]`` the store no
    longer has), add the passages above it, and commit once. A kill or a cancel before the
    commit leaves the old index; one after it and before the stamp is written is repaired by the
    next run, which deletes every id it adds before adding it. Returns the new stamp; an
    IndexError_ when the index cannot be opened or its count does not match the store's (the
    caller rebuilds)."""
    t = _tantivy()
    stamp = store_stamp(conn, title_weight)
    try:
        index = _open_index(path)
        writer = index.writer(heap, writer_threads())
    except (OSError, ValueError) as exc:
        raise IndexError_(f"The keyword index {path} cannot be opened for writing ({exc})",
                          hint="it is rebuilt") from exc
    repeat = stamp["title_repeat"]
    done = 0
    new = conn.execute("SELECT count(*) FROM passages WHERE id > ?", (old["max_id"],)).fetchone()[0]
    try:
        gaps: list[int] = []
        prev = 0
        for (pid,) in conn.execute("SELECT id FROM passages WHERE id <= ? ORDER BY id",
                                   (old["max_id"],)):
            gaps.extend(range(prev + 1, pid))  # passages deleted (now or at an earlier update)
            prev = pid
            if len(gaps) >= DELETE_BATCH:
                _delete(writer, index, gaps)
        gaps.extend(range(prev + 1, old["max_id"] + 1))
        _delete(writer, index, gaps)
        last = old["max_id"]
        while True:
            rows = conn.execute("SELECT id, title, text FROM passages WHERE id > ? ORDER BY id LIMIT ?",
                                (last, BUILD_BATCH)).fetchall()
            if not rows:
                break
            _delete(writer, index, [int(r[0]) for r in rows])  # a replay after a kill adds no twin
            for pid, title, text in rows:
                doc = t.Document(body=" ".join([title or ""] * repeat + [text or ""]))
                doc.add_unsigned("id", int(pid))
                writer.add_document(doc)
            last = rows[-1][0]
            done += len(rows)
            if progress:
                progress(done, new)
            if cancel is not None:
                from ...events import check

                check(cancel)
        writer.commit()
        writer.wait_merging_threads()
    except BaseException:
        writer.rollback()
        raise
    index.reload()
    live = index.searcher().num_docs
    if live != stamp["passages"]:
        raise IndexError_(f"The keyword index {path} holds {live:,} passages after its update and "
                          f"the corpus {stamp['passages']:,}", hint="it is rebuilt")
    built_with = old.get("built_with", old["passages"])
    stamp.update(built_with=built_with, deleted=old.get("deleted", 0) + _gone_since(conn, old))
    tmp = path / (STAMP + ".tmp")
    tmp.write_text(json.dumps(stamp), encoding="utf-8")
    os.replace(tmp, path / STAMP)
    return stamp


def _delete(writer, index, ids: list[int]) -> None:
    """Queue the deletion of the documents of ``ids`` (a term-set query: a term of an unsigned
    field given as a Python int would be read as signed and match nothing); empties ``ids``."""
    if ids:
        writer.delete_documents_by_query(_tantivy().Query.term_set_query(index.schema, "id", ids))
        ids.clear()


def _gone_since(conn, old: dict) -> int:
    """Passages of the index ``old`` describes that the store no longer has."""
    kept = conn.execute("SELECT count(*) FROM passages WHERE id <= ?", (old["max_id"],)).fetchone()[0]
    return old["passages"] - int(kept)
