"""``searchain bench strategies``: what each answering strategy costs around the model.

Every mode answers the first N questions of a benchmark file (HotpotQA or MuSiQue) over the pooled
passages of those records, with no model: a ``GrammarWalkerLLM`` writes, for every call, a valid
output of that call's grammar (it goes on for ``--closing-after`` calls per question, then
concludes), the in-memory BM25 retriever searches, the lexical reader reads. So the figures are the
strategies' call pattern and framework cost on real questions: LLM calls, rounds, prompt and
completion words, engine seconds; never accuracy (the walker answers "unknown"). The baseline,
measured in the same run, is SearChain: each other mode's calls, words and seconds are also
given as a ratio to it.
"""

from __future__ import annotations

import json
import statistics
import time

from ..errors import ConfigError

DEFAULT_MODES = "searchain,genground,geek"


def register(sub) -> None:
    p = sub.add_parser("strategies", help="call pattern and engine cost of each answering strategy (no model)")
    p.add_argument("--dataset", required=True, help="HotpotQA or MuSiQue JSON-lines file (../shared/eval/...)")
    p.add_argument("--limit", type=int, default=20, help="first N questions (default 20)")
    p.add_argument("--modes", default=DEFAULT_MODES, help=f"modes to compare (default {DEFAULT_MODES})")
    p.add_argument("--closing-after", type=int, default=2,
                   help="model calls per question before the stand-in model concludes (default 2)")
    p.add_argument("--json", action="store_true", help="(always JSON; accepted for symmetry)")
    p.set_defaults(func=handle)


def run(dataset_path: str, *, limit: int = 20, modes: str = DEFAULT_MODES, closing_after: int = 2) -> dict:
    from ..config import ReasoningSettings
    from ..eval.datasets import load_dataset, pooled_paragraphs
    from ..eval.runner import answer_question
    from ..llm.fakes.grammar_walker import GrammarWalkerLLM
    from ..reasoning.engine import SearChainEngine
    from ..reasoning.inmemory import InMemoryRetriever, LexicalReader
    from ..reasoning.modes import MODE_SEARCHAIN, check_mode
    from ..types import Passage

    wanted = [check_mode(m.strip()) for m in modes.split(",") if m.strip()]
    if not wanted:
        raise ConfigError("--modes names no mode.", hint=f"For example --modes {DEFAULT_MODES}.")
    if limit < 1 or closing_after < 0:
        raise ConfigError("--limit must be at least 1 and --closing-after at least 0.")
    if MODE_SEARCHAIN not in wanted:
        wanted.insert(0, MODE_SEARCHAIN)  # the baseline every ratio is taken against
    dataset = load_dataset(dataset_path, limit=limit)
    passages = [Passage("bench", f"p{i}", p.title, p.text) for i, p in enumerate(pooled_paragraphs(dataset))]
    retriever = InMemoryRetriever(passages)
    llm = GrammarWalkerLLM(closing_after=closing_after)
    engine = SearChainEngine(llm, retriever, LexicalReader(), settings=ReasoningSettings())

    def answer(question, **kwargs):
        llm.reset()
        return engine.answer(question, **kwargs)

    per_mode = {}
    for mode in wanted:
        calls, seconds, rounds, prompt, completion, errors, stops = [], [], [], [], [], 0, {}
        for question in dataset.questions:
            before = llm.total_calls
            started = time.perf_counter()
            outcome = answer_question(answer, question, mode=mode)
            seconds.append(time.perf_counter() - started)
            calls.append(llm.total_calls - before)
            rounds.append(outcome.rounds)
            prompt.append(outcome.prompt_tokens)
            completion.append(outcome.completion_tokens)
            errors += bool(outcome.error)
            stops[outcome.stop_reason or "error"] = stops.get(outcome.stop_reason or "error", 0) + 1
        per_mode[mode] = {
            "llm_calls_per_question": statistics.mean(calls),
            "rounds_per_question": statistics.mean(rounds),
            "prompt_words_per_question": statistics.mean(prompt),
            "completion_words_per_question": statistics.mean(completion),
            "engine_seconds_median": round(statistics.median(seconds), 5),
            "errors": errors,
            "stop_reasons": stops,
        }
    base = per_mode[MODE_SEARCHAIN]
    for figures in per_mode.values():
        figures["vs_searchain"] = {
            key: round(figures[key] / base[key], 3) if base[key] else None
            for key in ("llm_calls_per_question", "prompt_words_per_question", "engine_seconds_median")
        }
    return {
        "benchmark": "strategies",
        "dataset": str(dataset.path),
        "dataset_kind": dataset.kind,
        "questions": len(dataset.questions),
        "passages": len(passages),
        "closing_after": closing_after,
        "baseline": MODE_SEARCHAIN,
        "modes": per_mode,
    }


def handle(ctx, args) -> int:
    print(json.dumps(run(args.dataset, limit=args.limit, modes=args.modes, closing_after=args.closing_after)))
    return 0
