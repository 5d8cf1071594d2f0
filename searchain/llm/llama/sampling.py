"""Token sampling for the llama.cpp backend, with a fast path for GBNF grammars.

llama-cpp-python puts the grammar *inside* the sampler chain, so every token runs the grammar
over the whole vocabulary (49k entries for SmolLM2, 262k for Gemma 3) before picking one: 2-18x
the cost of decoding the token. ``TokenSampler`` does what llama.cpp's own ``common_sampler``
does instead: it samples from the unconstrained chain first and asks the grammar about that one
token; only when the grammar rejects it does it filter the whole vocabulary and sample again.

Greedy decoding gives exactly the slow path's tokens (the argmax over all tokens, if allowed, is
the argmax over the allowed ones; if not, the slow path runs). With temperature > 0 every token
is still one the grammar allows, but the distribution is llama.cpp's sample-then-check one, not
a renormalised constrained distribution (the same trade llama.cpp's CLI and server make).

When the grammar rejects the first choice, the whole-vocabulary filter is still avoided where it
can be: the grammar first judges only a shortlist of the ``SHORTLIST`` highest logits. Greedy
decoding then takes the best allowed token of the shortlist, which is the best allowed token of
the vocabulary (every token outside it has a lower logit). With temperature > 0 the shortlist is
used only when min-p would cut everything outside it anyway; otherwise, and when the shortlist
holds no allowed token, the whole vocabulary is filtered as before. A base model that fights
the grammar on most tokens (Gemma 3 270M on the final-answer prompt: 56 % rejections, 262k
vocabulary) paid the full filter on each of them.
"""

from __future__ import annotations

import ctypes
import math

import numpy as np

# Sampling settings used for temperature > 0 (llama-cpp-python's defaults).
TOP_K, TOP_P, MIN_P = 40, 0.95, 0.05
# Tokens the grammar judges after a rejection before it falls back to the whole vocabulary.
SHORTLIST = 256

_TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)], align=True)


class CompiledGrammar:
    """A parsed GBNF grammar for one vocabulary; ``start`` gives a fresh sampler state for a call.

    Parsing the CoQ grammar (hundreds of expanded repetition rules) is done once; each call
    clones the parsed grammar, which copies the rules without parsing them again.
    """

    def __init__(self, vocab, text: str):
        import llama_cpp

        self._pristine = llama_cpp.llama_sampler_init_grammar(vocab, text.encode("utf-8"), b"root")
        if not self._pristine:
            raise ValueError("the GBNF grammar could not be parsed (or has no `root` rule)")

    def start(self):
        import llama_cpp

        return llama_cpp.llama_sampler_clone(self._pristine)

    def close(self) -> None:
        import llama_cpp

        pristine, self._pristine = self._pristine, None
        if pristine:
            llama_cpp.llama_sampler_free(pristine)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


GRAMMAR_CACHE_SIZE = 16  # compiled grammars kept (the CoQ grammar, the reader's per-passage ones)


class GrammarCache:
    """Compiled grammars by text, the most recently used kept (``GRAMMAR_CACHE_SIZE``)."""

    def __init__(self):
        self._compiled: dict[str, CompiledGrammar] = {}

    def __len__(self) -> int:
        return len(self._compiled)

    def get(self, vocab, text: str) -> CompiledGrammar:
        """Compile ``text`` for ``vocab`` once; an invalid grammar is a clear error, never a crash."""
        from ...errors import SearchainError

        cached = self._compiled.pop(text, None)
        if cached is not None:
            self._compiled[text] = cached  # most recently used last
            return cached
        while len(self._compiled) >= GRAMMAR_CACHE_SIZE:
            # The LLM reader sends one grammar per passage: keep the recent ones, free the rest.
            self._compiled.pop(next(iter(self._compiled))).close()
        try:
            grammar = CompiledGrammar(vocab, text)
        except ValueError:
            raise SearchainError(
                "The GBNF grammar could not be parsed (or has no `root` rule).",
                hint="Check it with llama.cpp's grammar docs; set SEARCHAIN_LLAMA_VERBOSE=1 to "
                     "see the parser's message.",
            ) from None
        self._compiled[text] = grammar
        return grammar

    def close(self) -> None:
        compiled, self._compiled = self._compiled, {}
        for grammar in compiled.values():
            grammar.close()


def grammar_verdict(grammar: CompiledGrammar, tokens: list[int], end_token: int) -> str:
    """Does the grammar accept this token sequence? ``"complete"`` (it may end here),
    ``"incomplete"`` (a valid beginning) or ``"rejected"``. Checks outputs in tests and benchmarks
    with llama.cpp's own grammar engine, token by token as during generation."""
    import llama_cpp

    state = grammar.start()
    one = llama_cpp.llama_token_data(0, 1.0, 0.0)
    array = llama_cpp.llama_token_data_array(ctypes.pointer(one), 1, -1, False)
    try:
        for token in [*tokens, end_token]:
            one.id, one.logit, one.p = token, 1.0, 0.0
            array.data, array.size, array.selected, array.sorted = ctypes.pointer(one), 1, -1, False
            llama_cpp.llama_sampler_apply(state, ctypes.byref(array))
            if one.logit == -math.inf:
                return "incomplete" if token == end_token else "rejected"
            if token != end_token:
                llama_cpp.llama_sampler_accept(state, token)
        return "complete"
    finally:
        llama_cpp.llama_sampler_free(state)


def token_piece(vocab, token: int) -> bytes:
    """The bytes of one token of ``vocab``."""
    import llama_cpp

    size = 64
    while True:
        buf = ctypes.create_string_buffer(size)
        n = llama_cpp.llama_token_to_piece(vocab, token, buf, size, 0, False)
        if n >= 0:
            return buf.raw[:n]
        size = -n  # too small: llama.cpp returns minus the size it needs


def token_logprob(ctx, n_vocab: int, token: int, index: int = -1) -> float:
    """Natural-log probability of ``token`` under the model (before temperature and grammar),
    from the logits of batch position ``index`` of the last evaluated batch."""
    import llama_cpp

    ptr = llama_cpp.llama_get_logits_ith(ctx, index)
    logits = np.ctypeslib.as_array(ptr, shape=(n_vocab,)).astype(np.float64)
    top = logits.max()
    return float(logits[token] - top - math.log(np.exp(logits - top).sum()))


class TokenSampler:
    """Picks each next token for one generation call; ``close`` frees the C-side samplers.

    ``rejections`` counts the tokens the grammar refused, i.e. how often the slow path ran.
    ``sample_first=False`` filters the whole vocabulary for every token, as llama-cpp-python
    does (benchmarks and tests compare the two).
    """

    def __init__(self, n_vocab: int, *, temperature: float, seed: int,
                 grammar: CompiledGrammar | None = None, sample_first: bool = True):
        import llama_cpp

        self._n_vocab = n_vocab
        self._chain = llama_cpp.llama_sampler_chain_init(
            llama_cpp.llama_sampler_chain_default_params())
        if temperature <= 0.0:
            stages = [llama_cpp.llama_sampler_init_greedy()]
        else:  # the same chain llama-cpp-python builds, minus its no-op penalties stage
            stages = [llama_cpp.llama_sampler_init_top_k(TOP_K),
                      llama_cpp.llama_sampler_init_typical(1.0, 1),
                      llama_cpp.llama_sampler_init_top_p(TOP_P, 1),
                      llama_cpp.llama_sampler_init_min_p(MIN_P, 1),
                      llama_cpp.llama_sampler_init_temp(temperature),
                      llama_cpp.llama_sampler_init_dist(seed & 0xFFFFFFFF)]
        for stage in stages:
            llama_cpp.llama_sampler_chain_add(self._chain, stage)
        self._grammar = grammar.start() if grammar is not None else None
        self._sample_first = sample_first
        self.rejections = 0
        self.full_filters = 0  # rejections the shortlist could not settle
        self._temperature = temperature
        # One-token candidate array for asking the grammar about the chain's choice.
        self._one = llama_cpp.llama_token_data(0, 1.0, 0.0)
        self._one_array = llama_cpp.llama_token_data_array(
            ctypes.pointer(self._one), 1, -1, False)
        self._full: np.ndarray | None = None
        self._index = -1  # batch position whose logits ``sample`` reads

    def sample(self, ctx, index: int = -1) -> int:
        """The next token from the logits of batch position ``index`` of the last evaluated batch
        of ``ctx`` (-1: its last position; speculative decoding verifies the others)."""
        import llama_cpp

        self._index = index
        if self._grammar is not None and not self._sample_first:
            token = self._sample_constrained(ctx)
            llama_cpp.llama_sampler_accept(self._grammar, token)
            return token
        token = llama_cpp.llama_sampler_sample(self._chain, ctx, index)
        if self._grammar is None:
            return token
        if not self._allowed(token):
            self.rejections += 1
            token = self._sample_shortlist(ctx)
            if token is None:
                self.full_filters += 1
                token = self._sample_constrained(ctx)
        llama_cpp.llama_sampler_accept(self._grammar, token)
        return token

    def _allowed(self, token: int) -> bool:
        import llama_cpp

        self._one.id, self._one.logit, self._one.p = token, 1.0, 0.0
        self._one_array.data = ctypes.pointer(self._one)
        self._one_array.size, self._one_array.selected, self._one_array.sorted = 1, -1, False
        llama_cpp.llama_sampler_apply(self._grammar, ctypes.byref(self._one_array))
        return self._one.logit != -math.inf

    def _logits(self, ctx) -> np.ndarray:
        import llama_cpp

        return np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx, self._index),
                                       shape=(self._n_vocab,))

    def _sample_shortlist(self, ctx) -> int | None:
        """The grammar judges the ``SHORTLIST`` best tokens only; None when that cannot decide."""
        import llama_cpp

        logits = self._logits(ctx)
        size = min(SHORTLIST, self._n_vocab)
        top = np.argpartition(logits, -size)[-size:] if size < self._n_vocab else np.arange(size)
        short = np.zeros(size, dtype=_TOKEN_DATA)
        short["id"], short["logit"] = top, logits[top]
        candidates = llama_cpp.llama_token_data_array(
            short.ctypes.data_as(llama_cpp.llama_token_data_p), size, -1, False)
        llama_cpp.llama_sampler_apply(self._grammar, ctypes.byref(candidates))
        allowed = short["logit"] != -np.inf
        if not allowed.any():
            return None
        if self._temperature > 0.0:
            # Outside the shortlist every logit is <= its lowest; min-p drops a token whose
            # probability is under MIN_P of the best one's, so the shortlist is exact only when
            # that gap already holds for all of them.
            gap = (short["logit"][allowed].max() - logits[top].min()) / self._temperature
            if gap < -math.log(MIN_P):
                return None
        llama_cpp.llama_sampler_apply(self._chain, ctypes.byref(candidates))
        if candidates.selected < 0:
            return None
        token = int(candidates.data[candidates.selected].id)
        llama_cpp.llama_sampler_accept(self._chain, token)
        return token

    def _sample_constrained(self, ctx) -> int:
        """The slow path: the grammar filters every token, then the chain picks among the rest."""
        import llama_cpp

        if self._full is None:
            self._full = np.zeros(self._n_vocab, dtype=_TOKEN_DATA)
            self._full["id"] = np.arange(self._n_vocab, dtype=np.int32)
        self._full["logit"] = self._logits(ctx)
        self._full["p"] = 0.0
        candidates = llama_cpp.llama_token_data_array(
            self._full.ctypes.data_as(llama_cpp.llama_token_data_p), self._n_vocab, -1, False)
        llama_cpp.llama_sampler_apply(self._grammar, ctypes.byref(candidates))
        llama_cpp.llama_sampler_apply(self._chain, ctypes.byref(candidates))
        if candidates.selected < 0:
            raise RuntimeError("the sampler chain selected no token")
        token = int(candidates.data[candidates.selected].id)
        llama_cpp.llama_sampler_accept(self._chain, token)
        return token

    def close(self) -> None:
        import llama_cpp

        chain, self._chain = self._chain, None
        grammar, self._grammar = self._grammar, None
        if chain:
            llama_cpp.llama_sampler_free(chain)
        if grammar:
            llama_cpp.llama_sampler_free(grammar)
