"""``searchain bench llm --model PATH [--json]``: the llama.cpp backend against bare llama_cpp.

Three sides load the same GGUF with the same settings and generate the same number of tokens,
greedily, from the same prompt with an empty KV cache, in rotating order: the in-process backend
(``backend_*``), bare ``llama_cpp.Llama.create_completion`` (``raw_*``) and the backend in its
worker process (``isolated_*``, ``llm.isolation = process``, the default; ``--no-isolated``
skips it). Both backends stream their tokens to a callback, as the app does. The medians give
``backend_tokens_per_s``, ``raw_tokens_per_s`` and ``overhead_ratio`` (raw time / backend time:
1.0 means the backend adds nothing, > 1 that it is faster; the tokens/s are end to end, prompt
included, while ``backend_decode_tokens_per_s`` is generation alone), and likewise
``isolated_overhead_ratio`` (raw / isolated) and ``isolated_vs_inprocess``. A 3-round dialogue then reports
``prompt_tokens_evaluated_per_round`` with KV reuse and with the cache cleared before each round.
A random-weight file with a real layout (``searchain models make-test-model --layout llama-1b``)
measures the speed of the real model. Prints ONE JSON object.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import replace

PROMPT = ("Answer the question using the passages. Passage [1]: The Eiffel Tower is a wrought-iron "
          "lattice tower on the Champ de Mars in Paris, France. It is named after the engineer "
          "Gustave Eiffel, whose company designed and built the tower from 1887 to 1889. "
          "Question: Who designed the Eiffel Tower? Answer:")
# Replies are held to a plain sentence: a random-weight test model would otherwise emit stray
# bytes, and SearChain constrains its rounds with a grammar too.
SENTENCE_GRAMMAR = r'root ::= [A-Z] [a-z ,]{10,60} "."'
DIALOGUE = ("Who directed the film Jaws?", "Where was that director born?",
            "Which university did he attend?")


def register(sub) -> None:
    p = sub.add_parser("llm", help="llama.cpp backend speed vs bare llama_cpp, and KV reuse")
    p.add_argument("--model", required=True, help="a GGUF file")
    p.add_argument("--json", action="store_true", help="print only the JSON object (default too)")
    p.add_argument("--tokens", type=int, default=128, help="tokens generated per run")
    p.add_argument("--repeats", type=int, default=5, help="timed runs per side (after 1 warm-up)")
    p.add_argument("--n-ctx", type=int, default=2048)
    p.add_argument("--threads", type=int, default=0, help="0 = llama.cpp's default")
    p.add_argument("--gpu-layers", type=int, default=-1, help="-1 = auto (all if the build can)")
    p.add_argument("--no-isolated", dest="isolated", action="store_false",
                   help="skip the process-isolated backend (llm.isolation = process)")
    p.set_defaults(func=run)


def run(ctx, args) -> int:
    print(json.dumps(measure(ctx.settings.llm, args), indent=2))
    return 0


def measure(base_settings, args) -> dict:
    import llama_cpp

    from ...llm.base import GenerationParams
    from ...llm.llama.isolated import ProcessLLM
    from ...llm.llama.llama_cpp_backend import LlamaCppLLM, open_llama

    settings = replace(base_settings, model_path=args.model, backend="llama_cpp",
                       n_ctx=args.n_ctx, n_threads=args.threads, n_gpu_layers=args.gpu_layers)
    backend = LlamaCppLLM(settings)
    raw = open_llama(backend.path, n_gpu_layers=backend.n_gpu_layers, n_ctx=backend.n_ctx,
                     n_threads=settings.n_threads, n_batch=settings.n_batch, seed=settings.seed)
    isolated = ProcessLLM(settings) if args.isolated else None
    params = GenerationParams(max_tokens=args.tokens, temperature=0.0)
    try:
        def timed(llm):
            def run():
                llm.reset_cache()
                started = time.perf_counter()
                c = llm.complete(PROMPT, params, on_token=_ignore)  # streamed, as the app does
                return (time.perf_counter() - started, c.usage.completion_tokens,
                        c.usage.prompt_tokens, c.decode_tokens_per_s, c.prompt_seconds)
            return run

        def run_raw():
            raw.reset()
            started = time.perf_counter()
            out = raw.create_completion(PROMPT, max_tokens=args.tokens, temperature=0.0,
                                        repeat_penalty=1.0, seed=settings.seed)
            return time.perf_counter() - started, out["usage"]["completion_tokens"], \
                out["usage"]["prompt_tokens"]

        sides = {"backend": timed(backend), "raw": run_raw}
        if isolated is not None:
            sides["isolated"] = timed(isolated)
        names = list(sides)
        for name in names:  # warm-up: page in the weights, build the graphs
            sides[name]()
        runs: dict[str, list] = {name: [] for name in names}
        for i in range(args.repeats):  # rotate the order: no side always goes first
            for name in names[i % len(names):] + names[:i % len(names)]:
                runs[name].append(sides[name]())
        backend_runs, raw_runs = runs["backend"], runs["raw"]
        b_time = statistics.median(r[0] for r in backend_runs)
        r_time = statistics.median(r[0] for r in raw_runs)
        b_tokens, r_tokens = backend_runs[0][1], raw_runs[0][1]
        result = {
            "model": str(backend.path),
            "model_name": backend.facts.name,
            "quantisation": backend.facts.quantisation,
            "parameters": backend.facts.parameters,
            "file_size": backend.facts.file_size,
            "n_gpu_layers": backend.n_gpu_layers,
            "gpu_offload_supported": bool(llama_cpp.llama_supports_gpu_offload()),
            "n_threads": raw.context_params.n_threads,
            "n_ctx": backend.n_ctx,
            "prompt_tokens": backend_runs[0][2],
            "raw_prompt_tokens": raw_runs[0][2],
            "tokens_per_run": b_tokens,
            "raw_tokens_per_run": r_tokens,
            "repeats": args.repeats,
            "backend_seconds_median": round(b_time, 5),
            "raw_seconds_median": round(r_time, 5),
            "backend_tokens_per_s": round(b_tokens / b_time, 2),
            "raw_tokens_per_s": round(r_tokens / r_time, 2),
            "overhead_ratio": round((r_time / r_tokens) / (b_time / b_tokens), 4),
            # The backend's own split of a run: decode speed, and prompt evaluation speed.
            "backend_decode_tokens_per_s": round(statistics.median(r[3] for r in backend_runs), 2),
            "backend_prompt_tokens_per_s": round(
                backend_runs[0][2] / statistics.median(r[4] for r in backend_runs), 2),
        }
        if isolated is not None:
            result.update(_isolated_figures(runs["isolated"], r_time / r_tokens,
                                            b_time / b_tokens, isolated))
        result["prompt_tokens_evaluated_per_round"] = {
            "with_reuse": _dialogue(backend, reuse=True),
            "without_reuse": _dialogue(backend, reuse=False),
        }
    finally:
        backend.close()
        raw.close()
        if isolated is not None:
            isolated.close()
    return result


def _isolated_figures(runs, raw_per_token: float, backend_per_token: float, isolated) -> dict:
    """The process-isolated backend (``llm.isolation = process``) against bare llama_cpp and
    the in-process backend: ratios of seconds per token, > 1 = the isolated one is faster."""
    seconds = statistics.median(r[0] for r in runs)
    tokens = runs[0][1]
    return {
        "isolated_tokens_per_run": tokens,
        "isolated_seconds_median": round(seconds, 5),
        "isolated_tokens_per_s": round(tokens / seconds, 2),
        "isolated_decode_tokens_per_s": round(statistics.median(r[3] for r in runs), 2),
        "isolated_overhead_ratio": round(raw_per_token / (seconds / tokens), 4),
        "isolated_vs_inprocess": round(backend_per_token / (seconds / tokens), 4),
        "isolated_n_gpu_layers": isolated.n_gpu_layers,
    }


def _ignore(_text: str) -> None:
    pass


def _dialogue(backend, *, reuse: bool) -> list[int]:
    """Prompt tokens evaluated in each round of a 3-round chat (the cache starts empty)."""
    from ...llm.base import GenerationParams

    backend.reset_cache()
    messages = [{"role": "system", "content": "You answer questions in one short sentence."}]
    evaluated = []
    for question in DIALOGUE:
        if not reuse:
            backend.reset_cache()
        messages.append({"role": "user", "content": question})
        c = backend.chat(messages, GenerationParams(max_tokens=72, grammar=SENTENCE_GRAMMAR))
        evaluated.append(c.usage.prompt_tokens_evaluated)
        messages.append({"role": "assistant", "content": c.text})
    return evaluated
