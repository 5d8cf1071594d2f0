"""A second embedding model: its own index under ``index/second``, averaged into hybrid fusion.

Real components throughout: MiniLM as the first model, a tiny random sentence-transformers
model as the second (it scores differently, so its effect on the fusion is visible).
"""

import json
import logging
from dataclasses import replace

import numpy as np
import pytest

from searchain.config import Settings
from searchain.index.build.builder import build_index
from searchain.index.hybrid import _score_fusion, _zscore
from searchain.index.layout import IndexLayout, IndexMeta
from searchain.index.retrievers import open_retriever
from searchain.index.status import READY, STALE, index_status
from tests.fixtures.index import MINI_CORPUS


def with_second(name) -> Settings:
    s = Settings()
    return replace(s, retrieval=replace(s.retrieval, second_embedder=str(name)))


def layout_of(paths) -> IndexLayout:
    return IndexLayout(paths.corpora_dir / MINI_CORPUS / "index")


def test_build_adds_the_second_index_without_re_embedding_the_first(indexed_copy, embedder,
                                                                    tiny_embedder_dir):
    paths, settings = indexed_copy, with_second(tiny_embedder_dir)
    layout = layout_of(paths)
    first_shards = {f: f.stat().st_mtime_ns for f in layout.shard_files()}

    events = []
    report = build_index(paths, settings, MINI_CORPUS, embedder=embedder, on_event=events.append)

    assert report.embedded == 0 and report.second_embedded == 20
    # The second model's loading and embedding are visible stages of the build.
    assert events[0].stage == "embed 2nd" and events[0].message.startswith("loading local:tiny-emb@")
    assert any(e.stage == "embed 2nd" and e.done == 20 for e in events)
    assert report.second_embedder.startswith("local:tiny-emb@")
    meta = IndexMeta.read(layout.second.meta_file, MINI_CORPUS)
    assert (meta.embedder, meta.dim, meta.count) == (report.second_embedder, 32, 20)
    assert {f: f.stat().st_mtime_ns for f in layout.shard_files()} == first_shards
    # Up to date now: a second build embeds nothing with either model.
    again = build_index(paths, settings, MINI_CORPUS, embedder=embedder)
    assert (again.embedded, again.second_embedded) == (0, 0)


def test_status_says_stale_until_the_second_model_has_indexed_the_corpus(indexed_copy, embedder,
                                                                       tiny_embedder_dir):
    paths, settings = indexed_copy, with_second(tiny_embedder_dir)
    settings.save(paths)
    before = index_status(paths, MINI_CORPUS)
    assert before.state == STALE and before.usable
    assert "second embedding model" in before.message and "has not indexed" in before.message
    assert "searchain corpus index mini" in before.hint

    build_index(paths, settings, MINI_CORPUS, embedder=embedder)
    assert index_status(paths, MINI_CORPUS).state == READY
    # Turned off again, the first index alone is what counts.
    Settings().save(paths)
    assert index_status(paths, MINI_CORPUS).state == READY


def test_hybrid_averages_the_two_models_cosines(indexed_copy, embedder, tiny_embedder_dir):
    paths, settings = indexed_copy, with_second(tiny_embedder_dir)
    build_index(paths, settings, MINI_CORPUS, embedder=embedder)
    hybrid = open_retriever(paths, settings, MINI_CORPUS, "hybrid", embedder=embedder)
    plain = open_retriever(paths, Settings(), MINI_CORPUS, "hybrid", embedder=embedder)
    assert hybrid.second is not None and plain.second is None

    query = "Which city is the capital of France?"
    fused = {i: s for i, s, _ in hybrid.fused_scores(query, 20)}
    cands = list(fused)
    first = hybrid.dense.similarities(hybrid.dense.embed_query(query), cands)
    second = hybrid.second.similarities(hybrid.second.embed_query(query), cands)
    bm25 = dict(hybrid.bm25.scores(query, len(cands), restrict_to=cands))
    z1, z2 = _zscore(first, cands, min(first.values())), _zscore(second, cands, min(second.values()))
    zb = _zscore(bm25, cands, 0.0)
    for i in cands:
        assert fused[i] == pytest.approx(0.5 * (z1[i] + z2[i]) / 2 + 0.5 * zb[i], abs=1e-6)
    # The random second model really moves the fused scores.
    plain_scores = {i: s for i, s, _ in plain.fused_scores(query, 20)}
    assert max(abs(fused[i] - plain_scores[i]) for i in cands if i in plain_scores) > 0.05


def test_fusion_of_two_dense_sides_is_their_mean():
    cands = [1, 2, 3]
    a, b, bm25 = {1: 0.9, 2: 0.5, 3: 0.1}, {1: 0.1, 2: 0.5, 3: 0.9}, {1: 1.0, 2: 1.0, 3: 1.0}
    fused = _score_fusion(cands, [a, b], bm25, 1.0, "zscore")
    assert fused == pytest.approx({1: 0.0, 2: 0.0, 3: 0.0})  # opposite rankings cancel out
    one = _score_fusion(cands, [a], bm25, 1.0, "zscore")
    assert one[1] > one[2] > one[3]


def test_search_runs_without_the_second_model_until_its_index_is_built(indexed_copy, embedder,
                                                                      tiny_embedder_dir, caplog):
    paths = indexed_copy
    with caplog.at_level(logging.WARNING, logger="searchain.retrieval"):
        hybrid = open_retriever(paths, with_second(tiny_embedder_dir), MINI_CORPUS, "hybrid",
                                embedder=embedder)
    assert hybrid.second is None
    assert hybrid.search("capital of France", k=1)[0].passage.title == "Paris"
    assert "runs without the second model" in caplog.text and "no finished vector index" in caplog.text


def test_another_second_model_replaces_only_the_second_index(indexed_copy, embedder, tiny_embedder_dir,
                                                             tmp_path):
    from searchain.index.fakes import write_tiny_embedder

    paths = indexed_copy
    build_index(paths, with_second(tiny_embedder_dir), MINI_CORPUS, embedder=embedder)
    other = write_tiny_embedder(tmp_path / "other-emb", seed=1)
    report = build_index(paths, with_second(other), MINI_CORPUS, embedder=embedder)
    assert report.embedded == 0 and report.second_embedded == 20
    meta = IndexMeta.read(layout_of(paths).second.meta_file, MINI_CORPUS)
    assert meta.embedder.startswith("local:other-emb@")
    # A rebuild starts both over.
    rebuilt = build_index(paths, with_second(other), MINI_CORPUS, embedder=embedder, rebuild=True)
    assert (rebuilt.embedded, rebuilt.second_embedded) == (20, 20)


def test_a_damaged_second_index_is_reported_and_search_goes_on(indexed_copy, embedder,
                                                               tiny_embedder_dir):
    paths, settings = indexed_copy, with_second(tiny_embedder_dir)
    build_index(paths, settings, MINI_CORPUS, embedder=embedder)
    graph = layout_of(paths).second.compact_file
    graph.write_bytes(graph.read_bytes()[:100])
    settings.save(paths)
    status = index_status(paths, MINI_CORPUS)
    assert status.state == STALE and "second embedding model's index is damaged" in status.message
    hybrid = open_retriever(paths, settings, MINI_CORPUS, "hybrid", embedder=embedder)
    assert hybrid.second is None and hybrid.search("capital of France", k=1)
    # Building again repairs it from the saved embeddings.
    report = build_index(paths, settings, MINI_CORPUS, embedder=embedder)
    assert report.second_embedded == 0 and index_status(paths, MINI_CORPUS).state == READY
    assert np.isfinite(open_retriever(paths, settings, MINI_CORPUS, "hybrid", embedder=embedder)
                       .search("capital of France", k=1)[0].score)


def test_the_workspace_loads_the_second_model_once_for_every_corpus(indexed_copy, embedder,
                                                                   tiny_embedder_dir, mini_corpus_file):
    from searchain.corpus.manager import CorpusManager
    from searchain.workspace import Workspace

    paths, settings = indexed_copy, with_second(tiny_embedder_dir)
    CorpusManager(paths, settings).add("mini2", mini_corpus_file, "jsonl")
    for name in (MINI_CORPUS, "mini2"):
        build_index(paths, settings, name, embedder=embedder)
    ws = Workspace(paths, settings)
    one, two = ws.retriever(MINI_CORPUS), ws.retriever("mini2")
    assert one.second is not None and two.second is not None
    assert one.second.embedder is two.second.embedder is ws.second_embedder()
    settings.retrieval.second_embedder = ""
    assert ws.second_embedder() is None


def test_cli_index_reports_the_second_model_and_status_shows_it(indexed_copy, tiny_embedder_dir, capsys):
    from searchain.cli.main import main

    paths, settings = indexed_copy, with_second(tiny_embedder_dir)
    settings.save(paths)
    assert main(["corpus", "info", MINI_CORPUS]) == 0
    assert "index:     stale" in capsys.readouterr().out
    assert main(["corpus", "index", MINI_CORPUS]) == 0
    out = capsys.readouterr().out
    assert "20 passages (0 embedded, 20 reused; second model local:tiny-emb@" in out and ": 20 embedded)" in out
    assert main(["corpus", "info", MINI_CORPUS]) == 0
    info = capsys.readouterr().out
    assert "index:     ready" in info and "2nd model: 20  (local:tiny-emb@" in info
    assert main(["corpus", "info", MINI_CORPUS, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["second_index"]["count"] == 20 and data["index"]["state"] == "ready"


def test_a_missing_second_model_leaves_it_out_and_the_first_index_is_still_built(
        home, mini_corpus_file, tmp_path, capsys):
    from searchain.cli.main import main
    from searchain.corpus.manager import CorpusManager

    settings = with_second(tmp_path / "no-such-model")
    settings.save(home)
    CorpusManager(home, settings).add(MINI_CORPUS, mini_corpus_file, "jsonl")
    assert main(["corpus", "index", MINI_CORPUS]) == 0
    captured = capsys.readouterr()
    assert "index ready, 20 passages (20 embedded)" in captured.out
    assert "warning: no index for the second embedding model" in captured.err
    assert "no-such-model does not exist" in captured.err
    status = index_status(home, MINI_CORPUS)
    assert status.state == STALE and "has not indexed it yet" in status.message


def test_new_passages_the_second_model_lacks_are_added_to_its_index_alone(indexed_copy, embedder,
                                                                         tiny_embedder_dir, tmp_path):
    from tests.index.test_builder import add_mini

    paths, settings = indexed_copy, with_second(tiny_embedder_dir)
    build_index(paths, settings, MINI_CORPUS, embedder=embedder)
    add_mini(paths, tmp_path, [("Kyoto", "Kyoto was the imperial capital of Japan.")], "more.jsonl",
             id_prefix="new")
    build_index(paths, Settings(), MINI_CORPUS, embedder=embedder)  # the second model turned off
    settings.save(paths)
    status = index_status(paths, MINI_CORPUS)
    assert status.state == STALE and "has indexed 20 of its 21 passages" in status.message
    hybrid = open_retriever(paths, settings, MINI_CORPUS, "hybrid", embedder=embedder)
    assert hybrid.second is not None  # a stale second index is still used
    report = build_index(paths, settings, MINI_CORPUS, embedder=embedder)
    assert (report.embedded, report.second_embedded) == (0, 1)
    assert index_status(paths, MINI_CORPUS).state == READY
