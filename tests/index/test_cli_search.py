"""``searchain search`` prints hits (text and --json) and clear errors."""

import json

import pytest

from searchain.cli.main import main
from tests.fixtures.index import MINI_CORPUS


@pytest.mark.slow  # the CLI loads its own copy of the model
def test_search_json_output(indexed_copy, capsys):
    code = main(["search", MINI_CORPUS, "capital of Japan", "-k", "3", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    data = json.loads(out)
    assert data["corpus"] == MINI_CORPUS and len(data["hits"]) == 3
    top = data["hits"][0]
    assert top["title"] == "Tokyo" and top["rank"] == 1 and top["pid"] == "m016"
    assert data["retriever"] == "hybrid"


def test_search_text_output_with_bm25(indexed_copy, capsys):
    code = main(["search", MINI_CORPUS, "Mount Everest, highest in the world", "--retriever", "bm25", "-k", "2"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("[1] Mount Everest") and "[2]" in out


def test_search_bad_input_is_a_clear_error(indexed_copy, capsys):
    assert main(["search", MINI_CORPUS, "x", "-k", "0", "--retriever", "bm25"]) == 1
    assert "-k must be at least 1" in capsys.readouterr().err
    assert main(["search", "nope", "x", "--retriever", "bm25"]) == 1
    assert "nope" in capsys.readouterr().err
    assert main(["search", MINI_CORPUS, "  ", "--retriever", "bm25"]) == 1
    assert "empty" in capsys.readouterr().err


def test_searching_the_demo_on_a_fresh_home_builds_it_first(home, capsys):
    assert main(["search", "demo", "Who composed The Lantern Suite?", "--retriever", "bm25", "-k", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("[1] The Lantern Suite")
    assert main(["corpus", "list"]) == 0
    assert "demo" in capsys.readouterr().out


def test_a_corpus_not_indexed_yet_is_searched_by_keywords_and_says_so(home, tmp_path, capsys):
    from searchain.config import Settings
    from searchain.corpus.manager import CorpusManager
    from tests.fixtures.index import write_mini_corpus

    CorpusManager(home, Settings()).add(MINI_CORPUS, write_mini_corpus(tmp_path / "m.jsonl"), "jsonl")
    assert main(["search", MINI_CORPUS, "capital of Japan", "-k", "2", "--json"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["retriever"] == "bm25" and data["keyword_only"] == [MINI_CORPUS]
    assert data["hits"][0]["title"] == "Tokyo"
    assert "keywords only" in captured.err and f"searchain corpus index {MINI_CORPUS}" in captured.err
