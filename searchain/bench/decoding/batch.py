"""``searchain bench batch --model M.gguf``: what evaluating k tokens in one batch costs against one.

Speculative decoding (``llm.prompt_lookup``, ``llm.draft_model``) checks the sampled token and k
drafted ones in one batch, and parallel sequences put one token of k sequences in one batch: both
pay only where a batch of k tokens costs little more than one token. This measures that cost on
the machine at hand: a prompt of ``--at`` tokens is put in the KV cache, then batches of each
``--sizes`` value are evaluated at that position (the logits of every position kept, as the
speculation's check does), ``--repeats`` times in rotating order, the cache cut back after each.
It also times evaluating a ``--prompt``-token prompt from an empty cache (prompt tokens/s).

Reports per size the median seconds, ``steps`` (seconds / one token's seconds: 1.0 means the batch
is free, k means no saving) and ``ceiling_speedup`` (k / steps: decode speed-up if every draft
were kept). Token ids are random, which changes nothing in the cost. A random-weight file of a
real shape (``searchain models make-test-model --layout qwen2.5-1.5b``) gives the real model's
figures. Prints ONE JSON object.
"""

from __future__ import annotations

import json
import statistics
import time

from ...errors import ConfigError


def register(sub) -> None:
    p = sub.add_parser("batch", help="seconds of a batch of k tokens against one token (where drafts pay)")
    p.add_argument("--model", required=True, help="a GGUF file")
    p.add_argument("--at", type=int, default=600, help="tokens already in the cache (default 600)")
    p.add_argument("--sizes", default="1,2,3,5,9,17", help="batch sizes, 1 first (default 1,2,3,5,9,17)")
    p.add_argument("--repeats", type=int, default=6, help="timed batches per size (default 6)")
    p.add_argument("--prompt", type=int, default=512, help="prompt length for the prompt rate (default 512)")
    p.add_argument("--threads", type=int, default=0, help="llama.cpp threads (0 = llm.n_threads)")
    p.add_argument("--gpu-layers", type=int, default=-1, help="-1 = all if the build can offload")
    p.add_argument("--json", action="store_true", help="(always JSON; accepted for symmetry)")
    p.set_defaults(func=handle)


def handle(ctx, args) -> int:
    print(json.dumps(run(ctx.settings, args), indent=2))
    return 0


def parse_sizes(text: str) -> list[int]:
    try:
        sizes = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise ConfigError(f"--sizes must be whole numbers separated by commas, got {text!r}.") from None
    if not sizes or sizes[0] != 1 or any(s < 1 for s in sizes):
        raise ConfigError("--sizes must start with 1 (one token, the baseline), e.g. 1,3,5,9.")
    return sizes


def run(settings, args) -> dict:
    import dataclasses

    import numpy as np

    from ...llm.llama.llama_cpp_backend import LlamaCppLLM
    from ...llm.llama.speculation import eval_batch_all_logits

    sizes = parse_sizes(args.sizes)
    if args.repeats < 1 or args.at < 1 or args.prompt < 1:
        raise ConfigError("--repeats, --at and --prompt must be at least 1.")
    llm_settings = dataclasses.replace(settings.llm, model_path=args.model, n_gpu_layers=args.gpu_layers,
                                       n_threads=args.threads or settings.llm.n_threads,
                                       n_ctx=max(settings.llm.n_ctx, args.at + max(sizes) + 1, args.prompt + 1))
    llm = LlamaCppLLM(llm_settings)
    try:
        llama = llm._require_open()
        if max(sizes) > llm.n_batch:
            raise ConfigError(f"The largest size ({max(sizes)}) is above the batch size ({llm.n_batch}).")
        rng = np.random.default_rng(0)
        tokens = rng.integers(256, llama.n_vocab(), size=max(args.at + max(sizes), args.prompt)).tolist()

        def timed(at: int, batch: list[int], *, prompt: bool = False) -> float:
            llama.n_tokens = at
            started = time.perf_counter()
            if prompt:  # in n_batch pieces, the last position's logits only
                llama._ctx.kv_cache_seq_rm(-1, at, -1)
                llama.eval(batch)
            else:
                eval_batch_all_logits(llama, batch)
            _synchronize(llama, -1 if prompt else len(batch) - 1)
            return time.perf_counter() - started

        prompt_s = [timed(0, tokens[:args.prompt], prompt=True) for _ in range(max(2, args.repeats // 2))]
        timed(0, tokens[:args.at], prompt=True)  # the cache holds --at tokens from here on
        seconds: dict[int, list[float]] = {k: [] for k in sizes}
        timed(args.at, tokens[args.at:args.at + 1])  # a warm-up step
        for r in range(args.repeats):
            for k in sizes[r % len(sizes):] + sizes[:r % len(sizes)]:
                seconds[k].append(timed(args.at, tokens[args.at:args.at + k]))
        one = statistics.median(seconds[1])
        rows = [{"tokens": k, "median_s": round(statistics.median(s), 7), "runs_s": [round(x, 7) for x in s],
                 "steps": round(statistics.median(s) / one, 3),
                 "ceiling_speedup": round(k * one / statistics.median(s), 3)} for k, s in seconds.items()]
        return {"benchmark": "batch", "model": str(args.model), "at": args.at,
                "n_gpu_layers": llm.n_gpu_layers, "n_threads": llm_settings.n_threads,
                "system_info": _system_info(),
                "prompt": {"tokens": args.prompt, "median_s": round(statistics.median(prompt_s), 4),
                           "tokens_per_s": round(args.prompt / statistics.median(prompt_s), 1)},
                "decode_tokens_per_s": round(1 / one, 1), "batches": rows}
    finally:
        llm.close()


def _synchronize(llama, row: int) -> None:
    """Wait for the batch: reading a logits row waits for the computation (a GPU runs ahead)."""
    import llama_cpp

    llama_cpp.llama_get_logits_ith(llama._ctx.ctx, row)


def _system_info() -> str:
    import llama_cpp

    info = llama_cpp.llama_print_system_info()
    return info.decode(errors="replace") if isinstance(info, bytes) else str(info)
