"""The embedding stage on a local Ray instance (two workers): the same shards as a local build,
progress and cancel, resume by a local build, and the errors a user can meet.

Ray comes with the ``cluster`` extra, which ``make test`` installs; elsewhere these tests are
skipped with that reason (in CI, where ``CI=true``, a missing Ray fails instead).
"""

import os

import numpy as np
import pytest

from searchain.config import Settings
from searchain.corpus.manager import CorpusManager
from searchain.errors import Cancelled, IndexError_
from searchain.events import CancelToken, Progress
from searchain.index.build.builder import build_index
from searchain.index.build.shards import ShardStore
from searchain.index.layout import IndexLayout
from searchain.index.status import READY, index_status
from tests.fixtures.index import MINI_PASSAGES, write_mini_corpus

if os.environ.get("CI") != "true":
    pytest.importorskip("ray", reason="the cluster extra is not installed: pip install '.[cluster]' "
                                      "(make test does)")

from searchain.index.build.ray_embed import (  # noqa: E402
    RayEmbedding,
    RayOptions,
    block_size_for,
    id_ranges,
    ray_temp_dir,
)

pytestmark = pytest.mark.slow  # Ray starts actors that each load the model
CORPUS = "many"
# 200 passages in blocks of 16: enough blocks that both workers usually get some. Which worker
# embeds a block is Ray's scheduling: when reading is slower than embedding (a loaded CI machine),
# one worker can take every block, so the test asserts the plan, not the split.
PASSAGES = [(title, f"Fact {k} about {title}. {text}") for k in range(10) for title, text in MINI_PASSAGES]
SHARD = 64  # shards of 64, 64, 64 and 8, cut where a local build cuts them
BLOCK = 16


@pytest.fixture(scope="module")
def on_ray():
    """One private local Ray for the module: 2 CPUs, two embedding workers of one CPU each."""
    strategy = RayEmbedding(RayOptions(workers=2, local_cpus=2, block_size=BLOCK),
                            temp_dir=ray_temp_dir(None), corpus_name=CORPUS)
    with strategy:
        yield strategy


@pytest.fixture(scope="module")
def local_shards(embedder, tmp_path_factory):
    """The corpus's shards from a local build with the same shard size: the reference."""
    from searchain.config import AppPaths

    paths = AppPaths.resolve(tmp_path_factory.mktemp("local-build")).ensure()
    add_corpus(paths, tmp_path_factory.mktemp("src"))
    build_index(paths, Settings(), CORPUS, embedder=embedder, shard_size=SHARD)
    return shards_of(paths)


def add_corpus(paths, folder):
    source = write_mini_corpus(folder / "many.jsonl", PASSAGES)
    CorpusManager(paths, Settings()).add(CORPUS, source, "jsonl")


def shards_of(paths):
    return list(ShardStore(IndexLayout(paths.corpora_dir / CORPUS / "index"), CORPUS).iter_shards())


def test_ray_build_matches_a_local_build(on_ray, local_shards, home, tmp_path, embedder):
    add_corpus(home, tmp_path)
    events = []
    report = build_index(home, Settings(), CORPUS, embedder=embedder, shard_size=SHARD,
                         embed_missing=on_ray, on_event=events.append)
    assert report.embedded == 200 and report.total == 200
    assert 1 <= len(on_ray.workers_seen) <= 2  # at most the two workers asked for embedded
    assert index_status(home, CORPUS).state == READY
    got = shards_of(home)
    assert [ids.tolist() for ids, _ in got] == [ids.tolist() for ids, _ in local_shards]
    assert [len(ids) for ids, _ in got] == [64, 64, 64, 8]
    for (_, a), (_, b) in zip(got, local_shards):
        assert np.all((a * b).sum(axis=1) > 1 - 1e-4)
    embed = [e for e in events if isinstance(e, Progress) and e.stage == "embed"]
    assert any(e.message == "embedding on 2 Ray workers (1 CPU each)" for e in embed)
    done = [e.done for e in embed if e.done]
    assert done == sorted(done) and len(done) == 200 // BLOCK + 1 and done[-1] == 200
    from searchain.index.retrievers import open_retriever

    hits = open_retriever(home, Settings(), CORPUS, "dense", embedder=embedder).search(
        "who composed nine symphonies", 1)
    assert hits[0].passage.title == "Ludwig van Beethoven"


def test_cancel_keeps_complete_shards_and_a_local_build_finishes(on_ray, local_shards, home, tmp_path,
                                                                  embedder):
    add_corpus(home, tmp_path)
    cancel = CancelToken()

    def on_event(event):
        if isinstance(event, Progress) and event.stage == "embed" and event.done >= SHARD:
            cancel.cancel()

    with pytest.raises(Cancelled):
        build_index(home, Settings(), CORPUS, embedder=embedder, shard_size=SHARD,
                    embed_missing=on_ray, on_event=on_event, cancel=cancel)
    kept = shards_of(home)
    assert kept and all(len(ids) == SHARD for ids, _ in kept)  # only complete shards
    assert len(kept) < 4
    report = build_index(home, Settings(), CORPUS, embedder=embedder, shard_size=SHARD)
    assert report.reused == SHARD * len(kept) and report.embedded == 200 - report.reused
    assert [ids.tolist() for ids, _ in shards_of(home)] == [ids.tolist() for ids, _ in local_shards]
    assert index_status(home, CORPUS).state == READY


def test_a_worker_that_cannot_load_the_model_is_a_clear_error(on_ray, home, tmp_path):
    """A node without the model: the actors fail at start, and the error says why, not Ray's
    traceback."""
    from searchain.index.build.builder import EmbedJob
    from searchain.index.embed.embedder import Embedder

    add_corpus(home, tmp_path)
    with CorpusManager(home, Settings()).open_store(CORPUS) as store:
        layout = IndexLayout(home.corpora_dir / CORPUS / "index")
        job = EmbedJob(store=store, shards=ShardStore(layout, CORPUS), after_id=0, total=store.count(),
                       embedder=Embedder("/nonexistent/model", "cpu"), shard_size=SHARD, stage="embed")
        with pytest.raises(IndexError_) as err:
            on_ray(job)
    assert err.value.message == ("Embedding on Ray failed after 0 passages: Embedding model folder "
                                 "/nonexistent/model does not exist.")
    assert "The shards written so far are kept" in err.value.hint


def test_cli_index_on_ray(on_ray, home, tmp_path, embedder, capsys):
    """The command's wiring: it joins the running Ray, says who will embed, and builds. (The corpus
    is indexed already, so no actors start: the embedding itself is tested above.)"""
    from searchain.cli.main import main

    add_corpus(home, tmp_path)
    build_index(home, Settings(), CORPUS, embedder=embedder)
    assert main(["--home", str(home.config_dir.parent), "corpus", "index", CORPUS,
                 "--ray", "auto", "--ray-workers", "2"]) == 0
    out, err = capsys.readouterr()
    assert "many: index ready, 200 passages (0 embedded, 200 reused)" in out
    assert "embedding on 2 Ray workers (1 CPU each)" in err
    assert main(["--home", str(home.config_dir.parent), "corpus", "index", CORPUS,
                 "--ray", "auto", "--ray-workers", "5"]) == 1
    assert "5 workers of 1 CPU were asked for; the Ray cluster has 2 CPUs" in capsys.readouterr().err
    import ray

    assert ray.is_initialized()  # the command used the session it found and left it running


def test_id_ranges_cover_every_id_once(make_corpus):
    store = make_corpus("r", [(f"T{i}", f"text {i}") for i in range(10)])
    store.delete([f"r-{i}" for i in (2, 3, 7)])
    ranges = id_ranges(store.conn, 0, 3)
    live = [row[0] for row in store.conn.execute("SELECT id FROM passages ORDER BY id")]
    covered = [i for lo, hi in ranges for i in live if lo < i <= hi]
    assert covered == live and len(ranges) == 3
    assert id_ranges(store.conn, max(live), 3) == []


def test_small_jobs_get_smaller_blocks_so_every_worker_has_some():
    assert block_size_for(21_000_000, 8, 1024) == 1024
    assert block_size_for(200, 2, 1024) == 32  # 7 blocks, not one block for one worker
    assert block_size_for(200, 2, 16) == 16
    assert block_size_for(5, 2, 1024) == 32
