"""An index build meets its limits: a full disk (clear error, nothing lost, the next build continues)
and a graph too big for memory (refused before anything is embedded)."""

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from searchain.cli.main import main
from searchain.config import Settings
from searchain.corpus.manager import CorpusManager
from searchain.errors import IndexError_
from searchain.index.build.builder import build_index
from searchain.index.build.shards import ShardStore
from searchain.index.layout import IndexLayout
from searchain.index.retrievers import open_retriever
from searchain.index.status import PARTIAL, READY, STALE, index_status
from tests.fixtures.index import MINI_CORPUS, MINI_PASSAGES, write_mini_corpus

REPO = Path(__file__).resolve().parents[2]


def layout_of(paths):
    return IndexLayout(paths.corpora_dir / MINI_CORPUS / "index")


def test_disk_full_while_checkpointing_keeps_the_finished_shards(home, tmp_path, embedder, monkeypatch):
    CorpusManager(home, Settings()).add(MINI_CORPUS, write_mini_corpus(tmp_path / "m.jsonl"), "jsonl")
    real_write = ShardStore.write

    def write_until_full(self, seq, ids, vectors):
        if seq >= 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(self, seq, ids, vectors)

    monkeypatch.setattr(ShardStore, "write", write_until_full)
    with pytest.raises(IndexError_) as err:
        build_index(home, Settings(), MINI_CORPUS, embedder=embedder, shard_size=4)
    assert "Disk full" in str(err.value) and "8 passages embedded so far are kept" in str(err.value)
    assert "searchain corpus index mini" in err.value.hint
    assert index_status(home, MINI_CORPUS).state == PARTIAL

    monkeypatch.setattr(ShardStore, "write", real_write)  # space freed
    report = build_index(home, Settings(), MINI_CORPUS, embedder=embedder, shard_size=4)
    assert report.reused == 8 and report.embedded == len(MINI_PASSAGES) - 8
    assert index_status(home, MINI_CORPUS).state == READY


def test_other_os_errors_are_not_called_a_full_disk(home, tmp_path, embedder, monkeypatch):
    CorpusManager(home, Settings()).add(MINI_CORPUS, write_mini_corpus(tmp_path / "m.jsonl"), "jsonl")

    def denied(self, seq, ids, vectors):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(ShardStore, "write", denied)
    with pytest.raises(PermissionError):
        build_index(home, Settings(), MINI_CORPUS, embedder=embedder)


GROW_UNDER_FILE_SIZE_LIMIT = r"""
import resource, signal, sys
from searchain.config import AppPaths, Settings
from searchain.errors import IndexError_
from searchain.index.build.builder import build_index
from searchain.index.embed.embedder import Embedder
from searchain.index.ann.compact import CompactIndex
paths = AppPaths.resolve(sys.argv[1])
embedder = Embedder("sentence-transformers/all-MiniLM-L6-v2")
real_save = CompactIndex.save

def save_on_a_full_disk(self, path):
    # Past RLIMIT_FSIZE write() fails (EFBIG) as it would on a full disk. Only the index's
    # save runs under the limit; the corpus database and the new shard are written normally.
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), hard))
    try:
        return real_save(self, path)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
CompactIndex.save = save_on_a_full_disk
try:
    build_index(paths, Settings(), "mini", embedder=embedder)
except IndexError_ as exc:
    print("refused:", exc)
"""


@pytest.mark.slow  # the subprocess loads its own MiniLM
@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_graph_that_cannot_be_saved_whole_leaves_the_previous_index_working(indexed_copy, tmp_path,
                                                                               embedder):
    new = [("Kyoto", "Kyoto was the imperial capital of Japan for more than a thousand years."),
           ("Saturn", "Saturn is the sixth planet from the Sun, famous for its bright rings.")]
    source = write_mini_corpus(tmp_path / "more.jsonl", new, "new")
    CorpusManager(indexed_copy, Settings()).add(MINI_CORPUS, source, "jsonl")
    layout = layout_of(indexed_copy)
    graph_before, meta_before = layout.compact_file.read_bytes(), layout.meta_file.read_bytes()
    limit = len(graph_before) // 2
    done = subprocess.run([sys.executable, "-c", GROW_UNDER_FILE_SIZE_LIMIT,
                           str(indexed_copy.data_dir.parent), str(limit)],
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused:" in done.stdout and "could not be written completely" in done.stdout
    assert layout.compact_file.read_bytes() == graph_before and layout.meta_file.read_bytes() == meta_before
    status = index_status(indexed_copy, MINI_CORPUS)
    assert status.state == STALE and status.usable  # still answers, without the two new passages
    hits = open_retriever(indexed_copy, Settings(), MINI_CORPUS, "dense", embedder=embedder) \
        .search("capital of Japan", 1)
    assert hits[0].passage.title == "Tokyo"

    report = build_index(indexed_copy, Settings(), MINI_CORPUS, embedder=embedder)
    assert report.embedded == 0 and report.reused == len(MINI_PASSAGES) + 2  # the shard was kept
    assert index_status(indexed_copy, MINI_CORPUS).state == READY


@pytest.mark.slow  # the CLI loads its own copy of the model
def test_cli_index_continues_a_stopped_build_and_rebuild_re_embeds(home, tmp_path, embedder, capsys,
                                                                    monkeypatch):
    CorpusManager(home, Settings()).add(MINI_CORPUS, write_mini_corpus(tmp_path / "m.jsonl"), "jsonl")
    ShardStore(layout_of(home), MINI_CORPUS).write(1, *_first_vectors(home, embedder, 5))
    assert index_status(home, MINI_CORPUS).state == PARTIAL
    assert main(["corpus", "info", MINI_CORPUS]) == 0
    info = capsys.readouterr().out
    assert "index:     partial" in info and "searchain corpus index mini" in info
    assert main(["corpus", "index", MINI_CORPUS]) == 0
    out = capsys.readouterr().out
    assert f"{len(MINI_PASSAGES):,} passages ({len(MINI_PASSAGES) - 5} embedded, 5 reused)" in out
    assert index_status(home, MINI_CORPUS).state == READY
    assert main(["corpus", "index", MINI_CORPUS, "--rebuild"]) == 0
    assert f"({len(MINI_PASSAGES)} embedded)" in capsys.readouterr().out
    assert main(["corpus", "index", "nope"]) == 1
    assert "no corpus named 'nope'" in capsys.readouterr().err


def _first_vectors(paths, embedder, n):
    """The ids and vectors of the corpus's first ``n`` passages: a build that stopped after them."""
    import numpy as np

    from searchain.index.layout import doc_text

    with CorpusManager(paths, Settings()).open_store(MINI_CORPUS) as store:
        batch = next(store.iter_batches(after_id=0, batch_size=n))
    ids = np.array([i for i, _ in batch], dtype=np.int64)
    return ids, embedder.encode([doc_text(p) for _, p in batch], batch_size=8)


def test_an_index_too_big_for_memory_is_refused_before_embedding(home, tmp_path, embedder, monkeypatch):
    from searchain.index.build import builder
    from searchain.index.ann.compact import estimated_index_bytes

    CorpusManager(home, Settings()).add(MINI_CORPUS, write_mini_corpus(tmp_path / "m.jsonl"), "jsonl")
    need = estimated_index_bytes(len(MINI_PASSAGES), 384)["ram_build"]
    monkeypatch.setattr(builder, "total_memory_bytes", lambda: int(need / builder.MAX_RAM_SHARE) - 1)
    with pytest.raises(IndexError_, match="would need about") as err:
        build_index(home, Settings(), MINI_CORPUS, embedder=embedder)
    assert f"{len(MINI_PASSAGES):,} passages" in str(err.value) and "bm25" in err.value.hint
    assert not layout_of(home).shard_files()  # refused up front: nothing was embedded
    monkeypatch.setattr(builder, "total_memory_bytes", lambda: int(need / builder.MAX_RAM_SHARE) + 1)
    assert build_index(home, Settings(), MINI_CORPUS, embedder=embedder).total == len(MINI_PASSAGES)

    # A rebuild that could not fit is refused before the working index is thrown away.
    monkeypatch.setattr(builder, "total_memory_bytes", lambda: int(need / builder.MAX_RAM_SHARE) - 1)
    with pytest.raises(IndexError_, match="would need about"):
        build_index(home, Settings(), MINI_CORPUS, embedder=embedder, rebuild=True)
    assert index_status(home, MINI_CORPUS).state == READY
