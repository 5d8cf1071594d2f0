"""Helpers for the GenGround / GEEK tests: a retriever with a fixed ranking, and the engine."""

from dataclasses import replace

from searchain.config import ReasoningSettings
from searchain.reasoning.engine import SearChainEngine
from searchain.types import Hit, Passage

# Ten passages: the answer-bearing ones sit where each test needs them in the ranking.
FILLER = [Passage("test", f"f{i}", f"Filler {i}", f"Filler passage number {i} says nothing useful.")
          for i in range(1, 11)]


class FixedRetriever:
    """Returns ``ranking[query]`` (or ``default``) cut to k, whatever the query's words."""

    def __init__(self, default, ranking=None):
        self.default = list(default)
        self.ranking = dict(ranking or {})
        self.queries: list[str] = []

    def search(self, query, k=1):
        self.queries.append(query)
        passages = self.ranking.get(query, self.default)[:k]
        return [Hit(p, float(len(passages) - i), "fixed") for i, p in enumerate(passages)]


def engine(llm, retriever, *, embedder=None, options=None, **settings):
    e = SearChainEngine(llm, retriever, None, settings=replace(ReasoningSettings(), **settings), embedder=embedder)
    if options:
        e.strategy_options = options
    return e


def ranked(*answer_passages_at):
    """FILLER with (index, passage) pairs put in place: a ten-passage ranking."""
    out = list(FILLER)
    for index, passage in answer_passages_at:
        out[index] = passage
    return out
