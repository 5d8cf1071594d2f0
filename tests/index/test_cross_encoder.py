"""The cross-encoder re-ranking stage, through a real (tiny, random) BERT cross-encoder.

The tiny model's scores carry no meaning; what is checked is that the retriever's order is
exactly the model's order over the first stage's candidates, that candidates outside the first
stage's top-k can rise into it, how models are found, loaded, refused and downloaded, and that
the CLI and the benchmark reach it.
"""

import json
import shutil

import pytest

from searchain.cli.main import main as cli
from searchain.config import Settings
from searchain.errors import ModelError
from searchain.index.cross_encoder import (
    DEFAULT_RERANKER,
    CrossEncoderReranker,
    RerankedRetriever,
    download_reranker,
    installed_rerankers,
    is_cross_encoder_dir,
    reranker_dir,
)
from searchain.index.retrievers import HybridRetriever, open_retriever
from tests.fixtures.index import MINI_CORPUS
from tests.llm.hf_stub import FolderHubStub

QUERIES = ["capital city", "largest river in the world", "famous tower in Paris", "first antibiotic"]


@pytest.fixture(scope="module")
def tiny_ce_dir(tiny_cross_encoder_dir):
    return tiny_cross_encoder_dir


@pytest.fixture(scope="module")
def tiny_ce(tiny_ce_dir):
    return CrossEncoderReranker(tiny_ce_dir)


def test_scores_are_the_cross_encoders_own(tiny_ce, tiny_ce_dir):
    from sentence_transformers import CrossEncoder

    passages = [h.passage for h in _hits_for_scoring()]
    expected = CrossEncoder(str(tiny_ce_dir)).predict(
        [("capital city", f"{p.title}\n{p.text}") for p in passages], show_progress_bar=False)
    got = tiny_ce.scores("capital city", passages)
    assert got == pytest.approx([float(x) for x in expected], abs=1e-6)
    assert len(set(round(s, 4) for s in got)) == len(got)  # the spread head separates them
    assert tiny_ce.scores("capital city", []) == []


def _hits_for_scoring():
    from searchain.types import Hit, Passage

    return [Hit(Passage("c", str(n), t, x), 0.0, "x") for n, (t, x) in enumerate([
        ("Paris", "Paris is the capital of France."), ("Tokyo", "Tokyo is the capital of Japan."),
        ("Violin", "The violin is a string instrument."), ("", "Untitled text about rivers.")])]


def test_reranked_order_is_the_models_order_over_the_first_stage(indexed_home, embedder, tiny_ce):
    settings = Settings()
    settings.retrieval.rerank_depth = 8
    first = open_retriever(indexed_home, settings, MINI_CORPUS, "hybrid", embedder=embedder)
    reranked = open_retriever(indexed_home, settings, MINI_CORPUS, "hybrid", embedder=embedder,
                              reranker=tiny_ce)
    assert isinstance(first, HybridRetriever) and isinstance(reranked, RerankedRetriever)
    assert reranked.name == "hybrid+rerank"
    rose_into_top3 = changed = 0
    for query in QUERIES:
        candidates = first.search(query, 8)
        scores = tiny_ce.scores(query, [h.passage for h in candidates])
        want = [candidates[i].passage.pid for i in sorted(range(8), key=lambda i: -scores[i])][:3]
        hits = reranked.search(query, 3)
        assert [h.passage.pid for h in hits] == want
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert all(h.retriever == "hybrid+rerank" for h in hits)
        top3 = [h.passage.pid for h in candidates[:3]]
        changed += want != top3
        rose_into_top3 += any(pid not in top3 for pid in want)
    assert changed and rose_into_top3  # depth matters: passages ranked 4-8 can reach the top 3


def test_setting_turns_it_on_and_rerank_false_keeps_the_first_stage(indexed_home, embedder, tiny_ce_dir):
    settings = Settings()
    settings.retrieval.reranker = str(tiny_ce_dir)
    on = open_retriever(indexed_home, settings, MINI_CORPUS, "bm25")
    assert isinstance(on, RerankedRetriever) and on.name == "bm25+rerank"
    assert on.reranker.path == tiny_ce_dir
    off = open_retriever(indexed_home, settings, MINI_CORPUS, "bm25", rerank=False)
    assert off.name == "bm25"
    assert on.search("  ", 3) == [] and on.search("capital", 0) == []


def test_names_resolve_under_models_dir_and_are_listed(home, tiny_ce_dir, tiny_dpr_reader_dir):
    target = reranker_dir(home, "someone/tiny-ce")
    shutil.copytree(tiny_ce_dir, target)
    # A DPR reader has weights and a vocabulary too, but is not a sequence classifier.
    shutil.copytree(tiny_dpr_reader_dir, reranker_dir(home, "not-a-cross-encoder"))
    assert not is_cross_encoder_dir(reranker_dir(home, "not-a-cross-encoder"))
    assert installed_rerankers(home) == ["someone/tiny-ce"]
    assert CrossEncoderReranker("someone/tiny-ce", models_dir=home.models_dir).path == target


def test_missing_or_broken_models_are_clear_errors(home, tmp_path, tiny_ce_dir, indexed_home, embedder):
    with pytest.raises(ModelError, match="searchain reranker pull"):
        CrossEncoderReranker("nobody/nothing", models_dir=home.models_dir)
    broken = tmp_path / "broken"
    shutil.copytree(tiny_ce_dir, broken)
    (broken / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(ModelError, match="Cannot load the re-ranker"):
        CrossEncoderReranker(broken)
    settings = Settings()
    settings.retrieval.reranker = "nobody/nothing"
    with pytest.raises(ModelError, match="No cross-encoder re-ranker found"):
        open_retriever(indexed_home, settings, MINI_CORPUS, "bm25")


def test_download_through_the_real_hub_client(home, tiny_ce_dir, online):
    events = []
    files = {p.name: p.read_bytes() for p in tiny_ce_dir.iterdir()}
    files["README.md"] = b"not wanted"
    with FolderHubStub({"someone/tiny-ce": files}) as hub:
        path = download_reranker(home, "someone/tiny-ce", endpoint=hub.url, on_event=events.append)
        again = download_reranker(home, "someone/tiny-ce", endpoint=hub.url)
    assert path == again == reranker_dir(home, "someone/tiny-ce")
    assert sorted(p.name for p in path.iterdir() if p.is_file()) == sorted(set(files) - {"README.md"})
    assert not list(path.parent.glob(".*partial*"))
    assert CrossEncoderReranker(path).scores("capital", [_hits_for_scoring()[0].passage])
    fetched = [r for r in hub.requests if r[0] == "GET" and "/resolve/" in r[1]]
    assert len(fetched) == len(files) - 1  # listed once, each wanted file once, then a no-op
    assert events[-1].done == events[-1].total == len(files) - 1


def test_download_failures_leave_nothing_behind(home, tiny_ce_dir, online):
    no_weights = {p.name: p.read_bytes() for p in tiny_ce_dir.iterdir() if p.suffix != ".safetensors"}
    with FolderHubStub({"someone/no-weights": no_weights}) as hub:
        with pytest.raises(ModelError, match="no PyTorch weights"):
            download_reranker(home, "someone/no-weights", endpoint=hub.url)
        with pytest.raises(ModelError, match="refused someone/typo .HTTP 404"):
            download_reranker(home, "someone/typo", endpoint=hub.url)
    assert installed_rerankers(home) == []


def test_an_unreachable_hub_fails_at_the_first_request_without_retrying(home, online, monkeypatch):
    import socket

    import huggingface_hub

    listings = []  # the listing call retries a dead connection for ~20 s: it must not run

    monkeypatch.setattr(huggingface_hub.HfApi, "list_repo_files",
                        lambda *args, **kwargs: listings.append(args) or [])
    with socket.socket() as probe:  # a loopback port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    with pytest.raises(ModelError, match="Could not download the re-ranker") as info:
        download_reranker(home, endpoint=dead)
    assert "copy the model folder" in info.value.hint
    assert listings == [] and installed_rerankers(home) == []


def test_download_offline_says_so(home):
    with pytest.raises(ModelError) as info:
        download_reranker(home)
    assert DEFAULT_RERANKER in str(info.value) and "HF_HUB_OFFLINE" in str(info.value)
    assert not reranker_dir(home).exists()


def test_cli_use_status_and_search(indexed_copy, tiny_ce_dir, capsys):
    shutil.copytree(tiny_ce_dir, reranker_dir(indexed_copy, "someone/tiny-ce"))
    assert cli(["reranker", "use", "nobody/nothing"]) == 1
    assert "searchain reranker pull" in capsys.readouterr().err
    assert cli(["reranker", "use", "someone/tiny-ce", "--depth", "6"]) == 0
    capsys.readouterr()
    assert cli(["reranker", "status"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["reranker"] == "someone/tiny-ce" and status["rerank_depth"] == 6
    assert status["installed"] == ["someone/tiny-ce"]
    bm25 = ["--retriever", "bm25", "--json"]  # the CLI would load its own MiniLM for the others
    assert cli(["search", MINI_CORPUS, "capital city", "-k", "2"] + bm25) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["retriever"] == "bm25+rerank" and len(out["hits"]) == 2
    assert cli(["search", MINI_CORPUS, "capital city", "--reranker", "none"] + bm25) == 0
    assert json.loads(capsys.readouterr().out)["retriever"] == "bm25"
    assert cli(["reranker", "use", "none"]) == 0
    assert Settings.load(indexed_copy).retrieval.reranker == ""


def test_cli_use_keeps_a_folder_absolute(home, tiny_ce_dir, monkeypatch, capsys):
    monkeypatch.chdir(tiny_ce_dir.parent)
    assert cli(["reranker", "use", tiny_ce_dir.name]) == 0
    assert Settings.load(home).retrieval.reranker == str(tiny_ce_dir.resolve())
