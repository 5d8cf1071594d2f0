"""Index builds: status, incremental adds, deletions, mismatch/damage errors, cancel + resume."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from searchain.config import Settings
from searchain.corpus.manager import CorpusManager
from searchain.errors import Cancelled, IndexError_
from searchain.events import CancelToken, Progress
from searchain.index.build.builder import build_index
from searchain.index.embed.embedder import Embedder, resolve_model_path
from searchain.index.layout import IndexLayout, IndexMeta
from searchain.index.retrievers import open_retriever
from searchain.index.status import (DAMAGED, MISMATCH, MISSING, OUTDATED, PARTIAL, READY, STALE,
                                    index_status)
from tests.fixtures.index import MINI_CORPUS, MINI_PASSAGES, write_mini_corpus

REPO = Path(__file__).resolve().parents[2]


def layout_of(paths):
    return IndexLayout(paths.corpora_dir / MINI_CORPUS / "index")


def add_mini(paths, tmp_path, passages=MINI_PASSAGES, name="src.jsonl", id_prefix="m"):
    source = write_mini_corpus(tmp_path / name, passages, id_prefix)
    CorpusManager(paths, Settings()).add(MINI_CORPUS, source, "jsonl")


def test_built_index_is_ready_and_records_its_facts(indexed_home):
    status = index_status(indexed_home, MINI_CORPUS)
    assert status.state == READY and status.usable
    meta = json.loads(layout_of(indexed_home).meta_file.read_text())
    assert meta["embedder"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert meta["dim"] == 384 and meta["normalized"] is True
    assert meta["count"] == len(MINI_PASSAGES) and len(meta["checksum"]) == 64


def test_status_missing_before_any_build(home, tmp_path):
    add_mini(home, tmp_path)
    status = index_status(home, MINI_CORPUS)
    assert status.state == MISSING
    assert "keywords alone" in status.message  # what the corpus does meanwhile (KeywordOnly)


def test_incremental_add_embeds_only_the_new_passages(indexed_copy, tmp_path, embedder):
    new = [("Kyoto", "Kyoto was the imperial capital of Japan for more than a thousand years."),
           ("Saturn", "Saturn is the sixth planet from the Sun, famous for its bright rings.")]
    add_mini(indexed_copy, tmp_path, new, "more.jsonl", id_prefix="new")
    assert index_status(indexed_copy, MINI_CORPUS).state == STALE
    report = build_index(indexed_copy, Settings(), MINI_CORPUS, embedder=embedder)
    assert report.embedded == 2 and report.reused == len(MINI_PASSAGES)
    assert report.added_to_graph == 2 and not report.rebuilt_graph
    assert report.total == len(MINI_PASSAGES) + 2
    assert index_status(indexed_copy, MINI_CORPUS).state == READY
    hits = open_retriever(indexed_copy, Settings(), MINI_CORPUS, "dense", embedder=embedder) \
        .search("planet with rings", 1)
    assert hits[0].passage.title == "Saturn"
    again = build_index(indexed_copy, Settings(), MINI_CORPUS, embedder=embedder)
    assert again.embedded == 0 and again.added_to_graph == 0  # nothing to do


def test_precision_setting_reaches_the_build_and_mixed_precision_indexes_agree(indexed_copy, tmp_path):
    # The shared index was embedded under the default precision; new passages in bfloat16, then
    # queries in float32: the vectors are interchangeable, so the model id (and index) stays one.
    from dataclasses import replace

    add_mini(indexed_copy, tmp_path, [("Saturn", "Saturn is the sixth planet from the Sun, famous "
                                       "for its bright rings.")], "more.jsonl", id_prefix="new")
    settings = Settings()
    bf16 = replace(settings, retrieval=replace(settings.retrieval, embed_precision="bf16"))
    report = build_index(indexed_copy, bf16, MINI_CORPUS)
    assert report.embed_precision == "bf16" and report.embedded == 1
    assert report.to_dict()["embed_precision"] == "bf16"
    fp32 = replace(settings, retrieval=replace(settings.retrieval, embed_precision="fp32"))
    retriever = open_retriever(indexed_copy, fp32, MINI_CORPUS, "dense")
    assert retriever.embedder.effective_precision == "fp32"
    assert [h.passage.title for h in retriever.search("planet with rings", 1)] == ["Saturn"]
    assert index_status(indexed_copy, MINI_CORPUS, embedder_id=report.embedder).state == READY


def test_deleted_passages_leave_the_index(indexed_copy, embedder):
    with CorpusManager(indexed_copy, Settings()).open_store(MINI_CORPUS) as store:
        store.delete(["m016"])  # Tokyo
    report = build_index(indexed_copy, Settings(), MINI_CORPUS, embedder=embedder)
    assert report.removed_from_graph == 1 and report.embedded == 0
    assert report.total == len(MINI_PASSAGES) - 1
    assert index_status(indexed_copy, MINI_CORPUS).state == READY
    for kind in ("dense", "hybrid"):
        hits = open_retriever(indexed_copy, Settings(), MINI_CORPUS, kind, embedder=embedder) \
            .search("capital of Japan", 20)
        assert "Tokyo" not in [h.passage.title for h in hits]


def test_other_embedder_is_a_mismatch_naming_both_models(indexed_copy, tmp_path):
    link = tmp_path / "other-model"
    link.symlink_to(resolve_model_path("all-MiniLM-L6-v2"), target_is_directory=True)
    other = Embedder(str(link))
    settings = Settings()
    settings.retrieval.embedder = str(link)
    with pytest.raises(IndexError_) as err:
        open_retriever(indexed_copy, settings, MINI_CORPUS, "dense", embedder=other)
    text = str(err.value)
    assert "sentence-transformers/all-MiniLM-L6-v2" in text and other.model_id in text
    assert "searchain corpus index mini --rebuild" in err.value.hint
    assert index_status(indexed_copy, MINI_CORPUS, embedder_id=other.model_id).state == MISMATCH
    with pytest.raises(IndexError_):
        build_index(indexed_copy, settings, MINI_CORPUS, embedder=other)
    # BM25 needs no vectors, so it still works while the index waits for a rebuild.
    assert open_retriever(indexed_copy, settings, MINI_CORPUS, "bm25").search("Everest", 1)


def test_rebuild_with_another_embedder_starts_over(indexed_copy, tmp_path):
    link = tmp_path / "other-model"
    link.symlink_to(resolve_model_path("all-MiniLM-L6-v2"), target_is_directory=True)
    other = Embedder(str(link))
    report = build_index(indexed_copy, Settings(), MINI_CORPUS, embedder=other, rebuild=True)
    assert report.embedded == len(MINI_PASSAGES) and report.reused == 0
    assert IndexMeta.read(layout_of(indexed_copy).meta_file, MINI_CORPUS).embedder == other.model_id


def test_damaged_graph_file_is_a_clear_error_and_is_repaired_without_re_embedding(indexed_copy, embedder):
    hnsw = layout_of(indexed_copy).compact_file
    hnsw.write_bytes(hnsw.read_bytes()[:1000])  # truncated
    assert index_status(indexed_copy, MINI_CORPUS).state == DAMAGED
    for kind in ("dense", "hybrid"):
        with pytest.raises(IndexError_, match="damaged") as err:
            open_retriever(indexed_copy, Settings(), MINI_CORPUS, kind, embedder=embedder)
        assert "searchain corpus index mini" in err.value.hint
        assert "--rebuild" not in err.value.hint  # the saved embeddings suffice: no re-embedding
    report = build_index(indexed_copy, Settings(), MINI_CORPUS, embedder=embedder)
    assert report.embedded == 0 and report.rebuilt_graph and report.total == len(MINI_PASSAGES)
    assert index_status(indexed_copy, MINI_CORPUS).state == READY


def test_damaged_metadata_is_reported(indexed_copy, embedder):
    layout_of(indexed_copy).meta_file.write_text("{not json")
    assert index_status(indexed_copy, MINI_CORPUS).state == DAMAGED
    with pytest.raises(IndexError_, match="damaged"):
        open_retriever(indexed_copy, Settings(), MINI_CORPUS, "dense", embedder=embedder)


def test_cancel_keeps_finished_shards_and_the_next_build_continues(home, tmp_path, embedder):
    add_mini(home, tmp_path)
    token = CancelToken()

    def on_event(ev):
        if isinstance(ev, Progress) and ev.stage == "embed" and ev.done >= 8:
            token.cancel()

    with pytest.raises(Cancelled):
        build_index(home, Settings(), MINI_CORPUS, embedder=embedder, shard_size=4,
                    on_event=on_event, cancel=token)
    assert index_status(home, MINI_CORPUS).state == PARTIAL
    done = len(layout_of(home).shard_files()) * 4
    assert 0 < done < len(MINI_PASSAGES)
    report = build_index(home, Settings(), MINI_CORPUS, embedder=embedder, shard_size=4)
    assert report.reused == done and report.embedded == len(MINI_PASSAGES) - done
    assert index_status(home, MINI_CORPUS).state == READY


KILLER = r"""
import os, signal, sys
from searchain.config import AppPaths, Settings
from searchain.index.build.builder import build_index
from searchain.index.layout import IndexLayout
paths = AppPaths.resolve(sys.argv[1])
layout = IndexLayout(paths.corpora_dir / "mini" / "index")
def on_event(ev):
    # SIGKILL ourselves (no cleanup, like a crash or kill -9) once two shards are on disk.
    if len(layout.shard_files()) >= 2:
        os.kill(os.getpid(), signal.SIGKILL)
build_index(paths, Settings(), "mini", shard_size=4, on_event=on_event)
print("finished without being killed")
"""


@pytest.mark.slow
def test_build_killed_with_sigkill_resumes_without_re_embedding(home, tmp_path, embedder):
    add_mini(home, tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", KILLER, str(home.data_dir.parent)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    assert len(layout_of(home).shard_files()) == 2
    assert index_status(home, MINI_CORPUS).state == PARTIAL
    report = build_index(home, Settings(), MINI_CORPUS, embedder=embedder, shard_size=4)
    assert report.reused == 8 and report.embedded == len(MINI_PASSAGES) - 8
    assert report.total == len(MINI_PASSAGES)
    hits = open_retriever(home, Settings(), MINI_CORPUS, "dense", embedder=embedder) \
        .search("who discovered penicillin", 1)
    assert hits[0].passage.title == "Penicillin"


def test_an_index_of_the_old_hnswlib_format_is_upgraded_from_its_shards_without_re_embedding(
        indexed_copy, embedder):
    layout = layout_of(indexed_copy)
    meta = json.loads(layout.meta_file.read_text())
    old = {k: v for k, v in meta.items() if k not in ("backend", "spec", "rows", "format_version")}
    layout.meta_file.write_text(json.dumps({**old, "hnsw_m": 32, "hnsw_ef_construction": 200}))
    for path in (layout.compact_file, layout.rows_file, layout.shard_table_file, layout.deleted_file):
        path.unlink()
    layout.hnsw_file.write_bytes(b"\0" * 64)  # what format 1 kept
    status = index_status(indexed_copy, MINI_CORPUS)
    assert status.state == OUTDATED and not status.usable
    assert "nothing is re-embedded" in status.hint and "searchain corpus index mini" in status.hint
    with pytest.raises(IndexError_, match="older format") as err:
        open_retriever(indexed_copy, Settings(), MINI_CORPUS, "hybrid", embedder=embedder)
    assert "--rebuild" not in err.value.hint
    report = build_index(indexed_copy, Settings(), MINI_CORPUS, embedder=embedder)
    assert report.embedded == 0 and report.rebuilt_graph and report.total == len(MINI_PASSAGES)
    assert index_status(indexed_copy, MINI_CORPUS).state == READY and not layout.hnsw_file.exists()
    hits = open_retriever(indexed_copy, Settings(), MINI_CORPUS, "dense", embedder=embedder) \
        .search("capital of Japan", 1)
    assert hits[0].passage.title == "Tokyo"
