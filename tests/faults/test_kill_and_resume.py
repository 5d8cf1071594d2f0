"""Interrupted writers, then the same command again: the result equals an uninterrupted run.

"Equal" is checked on what a user sees: the corpus's passage ids (with their numeric ids, which
the vector index uses as labels), each source's recorded count, the index's passage count and
what searches return. The interruptions are a kill -9 (the process SIGKILLs itself at a chosen
point, so nothing runs after it: no ``finally``, no atexit) and a full disk (SQLite's own
``SQLITE_FULL``, from a page limit set on the store's connection mid-ingest).

Kills during a first ingest, an index build's later shards and a conversation save are covered
beside the code they test (``tests/corpus/test_manager.py``, ``tests/index/test_builder.py``,
``tests/store/test_crash.py``); these add the cases #36 named as missing.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from searchain.config import AppPaths, Settings
from searchain.corpus.manager import CorpusManager
from searchain.corpus.store import PassageStore
from searchain.errors import CorpusError
from searchain.index.build.builder import build_index
from searchain.index.retrievers import open_retriever
from searchain.index.status import PARTIAL, READY, index_status
from tests.corpus.test_manager import REPO, write_jsonl
from tests.fixtures.index import MINI_CORPUS, MINI_PASSAGES, write_mini_corpus

QUERIES = ["who discovered penicillin", "capital of Japan", "largest coral reef", "a string instrument"]


def fresh_home(tmp_path, name) -> AppPaths:
    return AppPaths.resolve(tmp_path / name).ensure()


def run_child(code: str, home: AppPaths) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter against ``home``; it is expected to SIGKILL itself."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code), str(home.config_dir.parent)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    return proc


def passage_ids(home: AppPaths, corpus: str) -> list[tuple[int, str]]:
    with CorpusManager(home, Settings()).open_store(corpus) as store:
        return store.conn.execute("SELECT id, pid FROM passages ORDER BY id").fetchall()


def searches(home: AppPaths, embedder) -> dict:
    """Top-5 pids per query for the dense and the hybrid retriever."""
    out = {}
    for kind in ("dense", "hybrid"):
        retriever = open_retriever(home, Settings(), MINI_CORPUS, kind, embedder=embedder)
        out[kind] = {q: [h.passage.pid for h in retriever.search(q, 5)] for q in QUERIES}
    return out


# -- kill -9 while the index build embeds ----------------------------------------------------

KILL_WHILE_EMBEDDING = """
    import os, signal, sys
    from searchain.config import AppPaths, Settings
    from searchain.events import Progress
    from searchain.index.build.builder import build_index
    def on_event(ev):
        # Mid-embedding: some passages embedded, the shard being filled not yet written.
        if isinstance(ev, Progress) and ev.stage == "embed" and 6 <= ev.done < 20:
            os.kill(os.getpid(), signal.SIGKILL)
    build_index(AppPaths.resolve(sys.argv[1]), Settings(), "mini", shard_size=4, on_event=on_event)
"""


@pytest.mark.slow
def test_a_kill_while_embedding_then_index_again_searches_like_an_uninterrupted_build(tmp_path, embedder):
    killed, whole = fresh_home(tmp_path, "killed"), fresh_home(tmp_path, "whole")
    source = write_mini_corpus(tmp_path / "mini.jsonl")
    for home in (killed, whole):
        CorpusManager(home, Settings()).add(MINI_CORPUS, source, "jsonl")

    run_child(KILL_WHILE_EMBEDDING, killed)
    assert index_status(killed, MINI_CORPUS).state == PARTIAL
    resumed = build_index(killed, Settings(), MINI_CORPUS, embedder=embedder, shard_size=4)
    uninterrupted = build_index(whole, Settings(), MINI_CORPUS, embedder=embedder, shard_size=4)

    assert resumed.reused > 0, "the resumed build re-embedded what the killed one had finished"
    assert resumed.total == uninterrupted.total == len(MINI_PASSAGES)
    for home in (killed, whole):
        assert index_status(home, MINI_CORPUS).state == READY
    assert passage_ids(killed, MINI_CORPUS) == passage_ids(whole, MINI_CORPUS)
    assert searches(killed, embedder) == searches(whole, embedder)


# -- kill -9 while a second source is added ---------------------------------------------------

KILL_WHILE_ADDING = """
    import os, signal, sys
    from searchain.config import AppPaths, Settings
    from searchain.corpus.manager import CorpusManager
    from searchain.events import Progress
    def on_event(ev):
        if isinstance(ev, Progress) and ev.done:  # a batch of the second source is committed
            os.kill(os.getpid(), signal.SIGKILL)
    CorpusManager(AppPaths.resolve(sys.argv[1]), Settings()).add("c", sys.argv[2], on_event=on_event)
"""


def test_a_kill_while_adding_a_second_source_then_the_same_add_gives_the_same_ids(tmp_path):
    first, second = write_jsonl(tmp_path / "a.jsonl", 300), write_jsonl(tmp_path / "b.jsonl", 1500, start=5000)
    killed, whole = fresh_home(tmp_path, "killed"), fresh_home(tmp_path, "whole")
    for home in (killed, whole):
        CorpusManager(home, Settings()).add("c", first)

    code = KILL_WHILE_ADDING.replace("sys.argv[2]", repr(str(second)))
    run_child(code, killed)
    manager = CorpusManager(killed, Settings())
    stopped = manager.info("c")
    assert stopped.state == "incomplete" and 300 < stopped.passages < 1800
    report = manager.add("c", second)
    assert report.added == 1800 - stopped.passages
    CorpusManager(whole, Settings()).add("c", second)

    assert passage_ids(killed, "c") == passage_ids(whole, "c")
    details = [{s["path"]: s["added"] for s in CorpusManager(h, Settings()).info("c").source_details}
               for h in (killed, whole)]
    assert details[0] == details[1] == {str(first): 300, str(second): 1500}


# -- a full disk during ingest ----------------------------------------------------------------

def test_a_full_disk_during_ingest_keeps_what_was_committed_and_the_same_add_finishes(tmp_path, monkeypatch):
    source = write_jsonl(tmp_path / "a.jsonl", 1600)
    full, whole = fresh_home(tmp_path, "full"), fresh_home(tmp_path, "whole")
    insert, calls = PassageStore._insert_batch, []

    def fill_the_disk_before_the_second_batch(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:  # SQLite may use no more pages than it has: the next write is SQLITE_FULL
            pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
            self.conn.execute(f"PRAGMA max_page_count = {pages}")
        return insert(self, *args, **kwargs)

    monkeypatch.setattr(PassageStore, "_insert_batch", fill_the_disk_before_the_second_batch)
    with pytest.raises(CorpusError) as err:
        CorpusManager(full, Settings()).add("c", source)
    monkeypatch.undo()  # the disk has room again
    assert "Disk full" in err.value.message and "run the same command again" in err.value.hint
    manager = CorpusManager(full, Settings())
    kept = manager.info("c")
    assert kept.state == "incomplete" and kept.passages > 0  # the first batch was committed
    with manager.open_store("c") as store:
        assert store.fts_integrity_ok()
        assert store.conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"

    assert manager.add("c", source).added == 1600 - kept.passages
    CorpusManager(whole, Settings()).add("c", source)
    assert passage_ids(full, "c") == passage_ids(whole, "c")
    assert manager.info("c").state == "ready"
