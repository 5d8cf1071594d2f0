"""A small model of the same family that drafts tokens for the big one (speculative decoding).

``DraftModel`` holds a second llama.cpp context (Qwen2.5-Coder-0.5B for -1.5B, say). Asked for a
draft, it brings its own KV cache up to the context so far (only what it has not seen: the
common prefix is kept, as in the main backend), writes ``limit`` tokens greedily and rolls its
cache back to the context. The main model checks the draft in one batch and keeps the tokens it
would have written itself (``LlamaCppLLM._generate``): plain greedy decoding's output up to the
rounding ``speculation.py`` describes.

Its tokens must mean the same to both models: ``vocabulary_mismatch`` compares the sizes, the
end and start tokens, and the text of a spread of token ids. A draft model that differs is
refused with that reason, and the backend decodes without it.
"""

from __future__ import annotations

import numpy as np

from .prefix_states import common_prefix

VOCAB_SAMPLES = 4096  # token ids compared between the two vocabularies, spread over all of them


def vocabulary_mismatch(main, draft, piece_main, piece_draft) -> str | None:
    """Why ``draft``'s vocabulary cannot stand for ``main``'s (llama_cpp ``_model`` objects), or
    None when they match; ``piece_*`` give a token's bytes in each."""
    n_main, n_draft = main.n_vocab(), draft.n_vocab()
    if n_main != n_draft:
        return f"it has {n_draft:,} tokens where the model has {n_main:,}"
    for name, a, b in (("end", main.token_eos(), draft.token_eos()), ("start", main.token_bos(), draft.token_bos())):
        if a != b:
            return f"its {name}-of-text token is {b} where the model's is {a}"
    for token in np.unique(np.linspace(0, n_main - 1, min(VOCAB_SAMPLES, n_main)).astype(int)).tolist():
        if piece_main(token) != piece_draft(token):
            return f"token {token} is {piece_draft(token)!r} in it and {piece_main(token)!r} in the model"
    return None


class DraftModel:
    """A loaded draft model; ``draft(context, limit)`` proposes up to ``limit`` tokens."""

    def __init__(self, llama, path: str):
        self._llama = llama
        self.path = path
        self._n_vocab = llama._model.n_vocab()

    def draft(self, context: np.ndarray, limit: int) -> list[int]:
        import llama_cpp

        llama = self._llama
        limit = min(limit, llama.n_ctx() - len(context) - 1)
        if limit < 1:
            return []
        cached = llama.n_tokens
        reuse = min(common_prefix(llama.input_ids[:cached], context), len(context) - 1)
        llama.n_tokens = reuse
        llama._ctx.kv_cache_seq_rm(-1, reuse, -1)
        llama.eval(context[reuse:].tolist())  # in n_batch chunks; logits of the last position
        out: list[int] = []
        while True:
            logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama._ctx.ctx, -1),
                                           shape=(self._n_vocab,))
            token = int(np.argmax(logits))
            if llama_cpp.llama_vocab_is_eog(llama._model.vocab, token):
                break
            out.append(token)
            if len(out) >= limit:
                break
            llama.eval([token])
        # Keep only the context in the cache: the next call starts from it.
        llama.n_tokens = len(context)
        llama._ctx.kv_cache_seq_rm(-1, len(context), -1)
        return out

    def close(self) -> None:
        llama, self._llama = self._llama, None
        if llama is not None:
            llama.close()


def open_draft(path: str, main_llama, open_llama, piece_main, **load) -> tuple[DraftModel | None, str]:
    """Load the draft model at ``path`` with ``open_llama(path, **load)`` and check it against
    ``main_llama``: (the draft model, "") or (None, why it is refused)."""
    from pathlib import Path

    from ...errors import ModelError
    from .sampling import token_piece

    file = Path(path).expanduser()
    if not file.is_file():
        return None, f"the draft model {file} does not exist"
    try:
        llama = open_llama(file, **load)
    except ModelError as exc:
        return None, f"the draft model {file.name} could not be loaded: {exc.message}"
    draft_vocab = llama._model.vocab
    why = vocabulary_mismatch(main_llama._model, llama._model, piece_main,
                              lambda token: token_piece(draft_vocab, token))
    if why:
        llama.close()
        return None, f"the draft model {file.name} does not share the model's vocabulary: {why}"
    return DraftModel(llama, str(file)), ""
