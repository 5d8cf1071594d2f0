"""Choosing the reader from settings, and re-ranking retrieved passages by reader relevance."""

import shutil

import pytest

from searchain.config import Settings
from searchain.errors import ConfigError, ModelError
from searchain.reader.dpr import DPRSpanReader, reader_dir
from searchain.reader.llm_reader import LLMReader
from searchain.reader.loader import load_reader
from searchain.reader.rerank import rerank, rerank_with_results
from searchain.types import Hit, Passage


class NoLogprobLLM:
    name = "stub"
    supports_grammar = False

    def chat(self, *a, **k):  # never called by these tests
        raise AssertionError

    complete = chat

    def close(self):
        pass


def _settings(reader):
    s = Settings()
    s.reasoning.reader = reader
    return s


@pytest.fixture
def installed_dpr(home, tiny_dpr_reader_dir):
    shutil.copytree(tiny_dpr_reader_dir, reader_dir(home))
    return home


def test_auto_prefers_installed_dpr(installed_dpr):
    settings = _settings("auto")
    settings.reasoning.theta = 2.5
    reader = load_reader(installed_dpr, settings, llm=NoLogprobLLM())
    assert isinstance(reader, DPRSpanReader) and reader.threshold == 2.5


def test_auto_falls_back_to_llm_reader(home):
    settings = _settings("auto")
    settings.reasoning.llm_reader_theta = 0.7
    reader = load_reader(home, settings, llm=NoLogprobLLM())
    assert isinstance(reader, LLMReader) and reader.threshold == 0.7


def test_llm_choice_ignores_installed_dpr(installed_dpr):
    assert isinstance(load_reader(installed_dpr, _settings("llm"), llm=NoLogprobLLM()), LLMReader)


@pytest.mark.parametrize("choice", ["auto", "llm"])
def test_nothing_usable_is_a_model_error(home, choice):
    with pytest.raises(ModelError) as info:
        load_reader(home, _settings(choice), llm=None)
    assert info.value.hint


def test_dpr_choice_without_dpr_is_a_model_error(home):
    with pytest.raises(ModelError, match="No DPR reader found"):
        load_reader(home, _settings("dpr"), llm=NoLogprobLLM())


def test_unknown_reader_is_a_config_error(home):
    with pytest.raises(ConfigError, match="'bert'"):
        load_reader(home, _settings("bert"))


def _hits(texts):
    return [Hit(Passage("c", str(i), f"T{i}", t), score=10.0 - i, retriever="bm25") for i, t in enumerate(texts)]


def test_rerank_orders_by_reader_relevance(tiny_dpr_reader):
    hits = _hits(["Stanley is a city.", "It was founded in 1902.", "North Dakota is a state.", "unused"])
    ranked = rerank_with_results(tiny_dpr_reader, "When was it founded?", hits, k=3)
    assert len(ranked) == 3 and {h.passage.pid for h, _ in ranked} == {"0", "1", "2"}
    confidences = [r.confidence for _, r in ranked]
    assert confidences == sorted(confidences, reverse=True)
    direct = {h.passage.pid: tiny_dpr_reader.read("When was it founded?", h.passage.title, h.passage.text)
              for h in hits[:3]}
    for hit, result in ranked:
        assert hit.score == pytest.approx(direct[hit.passage.pid].confidence, abs=1e-4)
        assert result.answer == direct[hit.passage.pid].answer and hit.retriever == "bm25+rerank"
    assert [h.passage.pid for h in rerank(tiny_dpr_reader, "When was it founded?", hits, 3)] == [
        h.passage.pid for h, _ in ranked]


class FixedConfidenceReader:
    name = "fixed"
    threshold = 0.5

    def __init__(self, confidences):
        self.confidences = confidences

    def read_many(self, question, passages):
        from searchain.reader.base import ReaderResult

        return [ReaderResult("", 0, 0, c, 0.5) for c in self.confidences[: len(passages)]]


def test_rerank_ties_keep_retriever_order_and_k_bounds():
    hits = _hits(["a", "b", "c"])
    assert [h.passage.pid for h in rerank(FixedConfidenceReader([1.0, 3.0, 1.0]), "q", hits, 3)] == ["1", "0", "2"]
    assert [h.passage.pid for h in rerank(FixedConfidenceReader([1.0]), "q", hits, 1)] == ["0"]
    assert rerank(FixedConfidenceReader([]), "q", [], 5) == []
    with pytest.raises(ValueError):
        rerank(FixedConfidenceReader([]), "q", hits, 0)
