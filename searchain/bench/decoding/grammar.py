"""``searchain bench grammar --model PATH``: what the GBNF grammars cost per generated token.

Runs the reasoning's real prompts with the grammars it sends them with (the Chain-of-Query
round, the final answer with ``[n]`` marks, a follow-up's rewrite), each three ways on one loaded
model, in rotating order:

- ``free``: no grammar (the baseline);
- ``grammar``: the grammar, sampled first and checked per token (``llm/llama/sampling.py``, the default);
- ``full_filter``: the grammar run over the whole vocabulary every token (llama-cpp-python's way,
  the code before issue #23).

Decode time per token excludes prompt evaluation (the KV cache is cleared before every run).
``overhead`` = grammar ms/token / free ms/token (goal <= 1.5); ``speedup`` = full_filter / grammar.
Greedy decoding, so ``identical_outputs`` checks the fast path writes exactly the slow path's text,
and ``valid`` that llama.cpp's grammar engine accepts every grammar output (whole, or a valid
beginning when the token limit cut it). Prints ONE JSON object.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import replace

QUESTIONS = (
    "In which village was the composer of The Lantern Suite born?",
    "Who directed the film Jaws, and where was that director born?",
    "Are the Eiffel Tower and the Statue of Liberty in the same country?",
)
PAIRS = (("Who directed the film Jaws?", "Steven Spielberg"),
         ("Where was Steven Spielberg born?", "Cincinnati, Ohio"))
FOLLOWUP_TURNS = "User: Who directed the film Jaws?\nAssistant: Steven Spielberg directed Jaws [1]."
WAYS = ("free", "grammar", "full_filter")

def register(sub) -> None:
    p = sub.add_parser("grammar", help="cost of grammar-constrained decoding per token")
    p.add_argument("--model", required=True, help="a GGUF file")
    p.add_argument("--json", action="store_true", help="print only the JSON object (default too)")
    p.add_argument("--tokens", type=int, default=96, help="most tokens generated per run")
    p.add_argument("--repeats", type=int, default=3, help="runs per prompt and way")
    p.add_argument("--n-ctx", type=int, default=4096)
    p.add_argument("--threads", type=int, default=0, help="0 = llama.cpp's default")
    p.add_argument("--gpu-layers", type=int, default=-1, help="-1 = auto (all if the build can)")
    p.set_defaults(func=run)


def run(ctx, args) -> int:
    print(json.dumps(measure(ctx.settings.llm, args), indent=2))
    return 0


def cases() -> list[tuple[str, list[dict], str]]:
    """(kind, chat messages, grammar) for each prompt the benchmark runs."""
    from ...reasoning.chain.grammar import coq_grammar, final_content_grammar, standalone_grammar
    from ...reasoning.chain.prompts import PromptBook, detect_task

    book = PromptBook()
    out = [("chain", [{"role": "user", "content": book.coq(q, detect_task(q))}], coq_grammar())
           for q in QUESTIONS]
    out.append(("final", [{"role": "user", "content": book.tracing(QUESTIONS[1], PAIRS)}],
                final_content_grammar()))
    out.append(("rewrite", [{"role": "user", "content": book.followup(
        "Where was he born?", FOLLOWUP_TURNS)}], standalone_grammar()))
    return out


def measure(base_settings, args) -> dict:
    from ...llm.base import GenerationParams
    from ...llm.llama.llama_cpp_backend import LlamaCppLLM

    settings = replace(base_settings, model_path=args.model, backend="llama_cpp",
                       n_ctx=args.n_ctx, n_threads=args.threads, n_gpu_layers=args.gpu_layers)
    llm = LlamaCppLLM(settings)
    try:
        rows = []
        for kind, messages, grammar in cases():
            samples: dict[str, list[tuple[float, int, str, int, bool, int]]] = {way: [] for way in WAYS}
            for repeat in range(args.repeats + 1):  # run 0 warms up, and is not timed
                order = WAYS[repeat % 3:] + WAYS[:repeat % 3]
                for way in order:
                    llm.reset_cache()
                    llm.grammar_sample_first = way != "full_filter"
                    params = GenerationParams(max_tokens=args.tokens,
                                              grammar=None if way == "free" else grammar)
                    c = llm.chat(messages, params)
                    if repeat:
                        valid = way == "free" or _valid(llm, grammar, c)
                        samples[way].append((c.seconds - c.prompt_seconds,
                                             c.usage.completion_tokens, c.text,
                                             llm.grammar_rejections, valid,
                                             llm.grammar_full_filters))
            rows.append(_row(kind, samples))
    finally:
        llm.grammar_sample_first = True
        llm.close()
    return _summary(args, llm, rows)


def _ms_per_token(runs) -> float:
    return statistics.median(1000 * seconds / max(1, tokens) for seconds, tokens, *_ in runs)


def _row(kind: str, samples) -> dict:
    free, fast, full = (_ms_per_token(samples[way]) for way in WAYS)
    tokens = samples["grammar"][0][1]
    return {
        "kind": kind,
        "free_ms_per_token": round(free, 3),
        "grammar_ms_per_token": round(fast, 3),
        "full_filter_ms_per_token": round(full, 3),
        "overhead": round(fast / free, 3),
        "full_filter_overhead": round(full / free, 3),
        "speedup": round(full / fast, 3),
        "free_tokens": samples["free"][0][1],
        "grammar_tokens": tokens,
        "rejected_share": round(samples["grammar"][0][3] / max(1, tokens), 3),
        # Rejections the shortlist could not settle, so the whole vocabulary was filtered.
        "full_filter_share": round(samples["grammar"][0][5] / max(1, tokens), 3),
        "identical_outputs": all(a[2] == b[2] for a, b in zip(samples["grammar"],
                                                             samples["full_filter"])),
        "valid": all(run[4] for way in ("grammar", "full_filter") for run in samples[way]),
        "grammar_output": samples["grammar"][0][2],
    }


def _valid(llm, grammar: str, completion) -> bool:
    """A finished output must be a whole sentence of the grammar; one cut by the token limit a
    valid beginning of one (llama.cpp's grammar engine decides)."""
    want = "incomplete" if completion.finish_reason == "length" else "complete"
    verdict = llm.grammar_verdict(grammar, llm.last_generated_tokens())
    return verdict == want or (want == "incomplete" and verdict == "complete")


def _summary(args, llm, rows) -> dict:
    overheads = [r["overhead"] for r in rows]
    return {
        "model": str(llm.path),
        "model_name": llm.facts.name,
        "n_vocab": llm._n_vocab,
        "n_gpu_layers": llm.n_gpu_layers,
        "tokens_per_run_max": args.tokens,
        "repeats": args.repeats,
        "overhead_median": round(statistics.median(overheads), 3),
        "overhead_max": max(overheads),
        "full_filter_overhead_median": round(
            statistics.median(r["full_filter_overhead"] for r in rows), 3),
        "speedup_median": round(statistics.median(r["speedup"] for r in rows), 3),
        "identical_outputs": all(r["identical_outputs"] for r in rows),
        "valid": all(r["valid"] for r in rows),
        "cases": rows,
    }
