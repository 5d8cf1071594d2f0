"""``searchain bench engine``: how much time the reasoning framework itself adds.

Each question runs the full SearChain loop (a correction in round 1, a passing round 2, then
tracing) with a ``ScriptedLLM`` of fixed latency, the in-memory BM25 retriever and the lexical
reader, each optionally slowed by a fixed latency to stand in for real components. Every LLM,
retrieval and reader call is timed; ``framework_overhead`` is the share of the total spent
outside them (target <= 0.05). The baseline, measured in the same run, replays the very same
calls bare, one after another, with no framework around them.
"""

from __future__ import annotations

import itertools
import json
import statistics
import time
from typing import Any

TARGET = 0.05


def register(sub) -> None:
    p = sub.add_parser("engine", help="framework overhead of the SearChain loop (scripted LLM)")
    p.add_argument("--questions", type=int, default=20, help="questions to answer (default 20)")
    p.add_argument("--llm-latency", type=float, default=0.05, help="seconds per LLM call (default 0.05)")
    p.add_argument("--retrieval-latency", type=float, default=0.005, help="extra seconds per search")
    p.add_argument("--reader-latency", type=float, default=0.01, help="extra seconds per reader call")
    p.add_argument("--json", action="store_true", help="(always JSON; accepted for symmetry)")
    p.set_defaults(func=handle)


class _Timed:
    """Wraps a component: adds a fixed latency per call and accumulates the time spent inside.

    Calls are stamped from a shared counter so the baseline can replay them in their order.
    """

    def __init__(self, inner: Any, latency: float, methods: tuple[str, ...], counter):
        self._inner, self._latency, self._methods, self._counter = inner, latency, methods, counter
        self.seconds = 0.0
        self.calls: list[tuple[int, str, tuple, dict]] = []

    def __getattr__(self, name: str):
        attr = getattr(self._inner, name)
        if name not in self._methods:
            return attr

        def timed(*args, **kwargs):
            self.calls.append((next(self._counter), name, args, kwargs))
            started = time.perf_counter()
            try:
                if self._latency:
                    time.sleep(self._latency)
                return attr(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started

        return timed


def _components(llm_latency: float, retrieval_latency: float, reader_latency: float):
    from ..llm.fakes.scripted import ScriptedLLM
    from ..reasoning.inmemory import InMemoryRetriever, LexicalReader

    counter = itertools.count()
    return (
        _Timed(ScriptedLLM(_script(), latency_s=llm_latency), 0.0, ("chat", "complete"), counter),
        _Timed(InMemoryRetriever(_passages()), retrieval_latency, ("search",), counter),
        _Timed(LexicalReader(), reader_latency, ("read", "read_many"), counter),
    )


def _passages():
    from ..types import Passage

    return [
        Passage("bench", "p1", "Spirit If...", "Spirit If... is the debut solo album by Kevin Drew, released in 2007."),
        Passage("bench", "p2", "Kevin Drew", "Kevin Drew was born in Toronto, Ontario, and co-founded Broken Social Scene."),
        Passage("bench", "p3", "Toronto Coach Terminal",
                "The Toronto Coach Terminal is the main intercity bus station of Toronto, used by Greyhound buses."),
    ] + [Passage("bench", f"x{i}", f"Filler {i}", f"Filler passage number {i} about nothing in particular.")
         for i in range(200)]


_Q = ("Who is the performer of Spirit If...?", "Where was Kevin Drew born?",
      "Where do Greyhound buses in Toronto leave from?")
QUESTION = "Where do Greyhound buses in the birthplace of the performer of Spirit If... leave from?"


def _script() -> list[str]:
    """Round 1 (node 2 wrong: correction), round 2 (passes), tracing."""
    return [
        f"[Query 1]: {_Q[0]}\n[Answer 1]: Kevin Drew\n[Query 2]: {_Q[1]}\n[Answer 2]: Vancouver\n"
        f"[Query 3]: {_Q[2]}\n[Answer 3]: Pacific Central Station\n[Final Content]: Pacific Central Station [3].",
        f"[Query 1]: {_Q[1]}\n[Answer 1]: Toronto\n[Query 2]: {_Q[2]}\n[Answer 2]: Toronto Coach Terminal\n"
        "[Final Content]: Toronto Coach Terminal [2].",
        "[Final Content]: Spirit If... is by Kevin Drew [1], born in Toronto [2], where Greyhound buses leave "
        "from the Toronto Coach Terminal [3]. So the final answer is Toronto Coach Terminal.",
    ]


def _share(total: float, *parts: _Timed) -> float:
    return max(0.0, total - sum(p.seconds for p in parts)) / total


def run(questions: int, llm_latency: float, retrieval_latency: float, reader_latency: float) -> dict:
    from ..config import ReasoningSettings
    from ..errors import ConfigError
    from ..reasoning.engine import SearChainEngine

    if questions < 1:
        raise ConfigError(f"--questions must be at least 1, got {questions}.")
    engine_totals, engine_shares, base_totals, base_shares = [], [], [], []
    for i in range(questions):
        llm, retriever, reader = _components(llm_latency, retrieval_latency, reader_latency)
        # The scripted scenario is the loop's own calls; a draft would be one more model call,
        # made by the baseline too, so it is left out of the scenario.
        engine = SearChainEngine(llm, retriever, reader, settings=ReasoningSettings(draft_answer=False))
        started = time.perf_counter()
        result = engine.answer(f"{QUESTION} (#{i})")
        total = time.perf_counter() - started
        if result.stop_reason != "finish" or len(result.references) != 3:
            raise RuntimeError(f"bench scenario went off script: {result.stop_reason}, {result.references}")
        engine_totals.append(total)
        engine_shares.append(_share(total, llm, retriever, reader))

        # Baseline: exactly the same calls, same arguments, same order, back to back.
        bare = _components(llm_latency, retrieval_latency, reader_latency)
        calls = sorted(llm.calls + retriever.calls + reader.calls, key=lambda c: c[0])
        owner = {"chat": bare[0], "complete": bare[0], "search": bare[1], "read": bare[2], "read_many": bare[2]}
        started = time.perf_counter()
        for _, name, args, kwargs in calls:
            getattr(owner[name], name)(*args, **kwargs)
        base_total = time.perf_counter() - started
        base_totals.append(base_total)
        base_shares.append(_share(base_total, *bare))

    overhead = statistics.median(engine_shares)
    return {
        "benchmark": "engine",
        "questions": questions,
        "llm_latency_s": llm_latency,
        "retrieval_latency_s": retrieval_latency,
        "reader_latency_s": reader_latency,
        "calls_per_question": len(calls),
        "median_total_s": round(statistics.median(engine_totals), 5),
        "median_baseline_s": round(statistics.median(base_totals), 5),
        "total_vs_baseline": round(statistics.median(engine_totals) / statistics.median(base_totals), 4),
        "framework_overhead": round(overhead, 5),
        "framework_overhead_max": round(max(engine_shares), 5),
        "baseline_overhead": round(statistics.median(base_shares), 5),
        "target": TARGET,
        "pass": overhead <= TARGET,
    }


def handle(ctx, args) -> int:
    print(json.dumps(run(args.questions, args.llm_latency, args.retrieval_latency, args.reader_latency)))
    return 0
