"""Prompt-lookup drafts for speculative decoding in the llama.cpp backend.

The reader copies a span from its passage, and the final answer copies names and dates from
its passages: the next few tokens are often already in the prompt, right after the tokens just
written. ``lookup_draft`` finds the last ``MAX_NGRAM`` (down to ``MIN_NGRAM``) tokens of the
context earlier in it, most recent occurrence first, and proposes the tokens that followed. The
backend evaluates the sampled token and the draft in one batch and keeps the draft tokens the
model itself picks from that batch's logits, the first disagreement ending the run (greedy
decoding only). That is plain greedy decoding's output up to floating-point rounding: a batch's
logits can differ from one token's in the last bits (other matmul kernels), which flips a
near-tie now and then (Qwen2.5-Coder-1.5B, BENCHMARKS.md #37). It pays only where a batch of k
tokens costs little more than one (a GPU, a memory-bound CPU); on a busy 2-core CPU it costs ~k.

llama-cpp-python's own ``LlamaPromptLookupDecoding`` works only inside ``Llama.generate`` with
``logits_all`` (a logits row per context position: 2.4 GB for a 151k vocabulary at 4,096
tokens), and takes the first, not the latest, match; the backend samples itself (grammar fast
path, ``sampling.py``), so the lookup lives here.
"""

from __future__ import annotations

import numpy as np

MAX_NGRAM = 3
MIN_NGRAM = 2  # a one-token match (a comma, "the") proposes noise more often than text


def lookup_draft(context: np.ndarray, limit: int, *, max_ngram: int = MAX_NGRAM,
                 min_ngram: int = MIN_NGRAM) -> list[int]:
    """Up to ``limit`` tokens that followed the latest earlier occurrence of the context's last
    n-gram (longest n first); [] when none occurs or ``limit`` < 1."""
    n = len(context)
    if limit < 1 or n < min_ngram + 1:
        return []
    for size in range(min(max_ngram, n - 1), min_ngram - 1, -1):
        tail = context[n - size:]
        # Candidate starts: where the tail's first token occurs, before the tail itself.
        starts = np.flatnonzero(context[:n - size] == tail[0])
        for start in starts[::-1]:  # the most recent occurrence first
            end = start + size
            if end < n and np.array_equal(context[start:end], tail):
                return context[end:end + limit].tolist()
    return []


def eval_batch_all_logits(llama, tokens: list[int]) -> None:
    """Evaluate ``tokens`` at the end of the cache in one batch, keeping the logits of every
    position (``llama_get_logits_ith(ctx, i)`` for batch position i). At most ``n_batch`` tokens."""
    n_past = llama.n_tokens
    llama._ctx.kv_cache_seq_rm(-1, n_past, -1)
    llama._batch.set_batch(batch=tokens, n_past=n_past, logits_all=True)
    llama._ctx.decode(llama._batch)
    llama.input_ids[n_past:n_past + len(tokens)] = tokens
    llama.n_tokens = n_past + len(tokens)


def drop_last(llama, count: int) -> None:
    """Forget the cache's last ``count`` tokens (a rejected draft)."""
    if count > 0:
        llama.n_tokens -= count
        llama._ctx.kv_cache_seq_rm(-1, llama.n_tokens, -1)
