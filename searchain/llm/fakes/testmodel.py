"""Write random-weight llama-architecture GGUF files, so the real llama.cpp path runs everywhere.

``write_test_gguf(path, layout="tiny")`` writes a model of a few hundred kilobytes (two layers,
byte-level BPE vocabulary, ChatML chat template) in well under a second: tests and CI load it with
the real ``llama_cpp.Llama``. Its output is gibberish, but every byte is a token, so a GBNF grammar
can always be followed and grammar-constrained text is well formed.

Layouts ``llama-1b`` and ``llama-8b`` copy the tensor shapes of Llama 3.2 1B and Llama 3.1 8B
(vocabulary padded to 128,256 tokens), ``qwen2.5-1.5b`` and ``qwen2.5-0.5b`` those of the starter
model and its draft model (151,936 tokens). Decode speed does not depend on the weights' values, so such
a file quantised with llama.cpp's own quantiser (``--quant Q4_K_M``) runs exactly as fast as the
real model: that is how the benchmark measures realistic speeds without downloading weights.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...errors import ModelError
from ..chat_templates import CHATML_TEMPLATE
from .bpe_vocab import TOKEN_CONTROL, build_vocab


@dataclass(frozen=True)
class Layout:
    n_embd: int
    n_layer: int
    n_head: int
    n_head_kv: int
    n_ff: int
    context_length: int
    vocab_size: int | None  # None: the bare byte-level vocabulary
    tied_embeddings: bool
    rope_theta: float = 10000.0
    dtype: str = "f32"  # storage type of the 2-D weights before any quantisation
    default_quant: str | None = None


LAYOUTS: dict[str, Layout] = {
    "tiny": Layout(64, 2, 4, 2, 192, 4096, None, False),
    # The tiny shape with its vocabulary padded to 512 tokens: a draft model that must not fit.
    "tiny-512-vocab": Layout(64, 2, 4, 2, 192, 4096, 512, False),
    # Llama 3.2 1B: 2048 wide, 16 layers, 32 heads / 8 KV heads, FFN 8192, tied output.
    "llama-1b": Layout(2048, 16, 32, 8, 8192, 131072, 128256, True, 500000.0, "f16", "Q4_K_M"),
    # Llama 3.1 8B: 4096 wide, 32 layers, 32 heads / 8 KV heads, FFN 14336, separate output.
    "llama-8b": Layout(4096, 32, 32, 8, 14336, 131072, 128256, False, 500000.0, "f16", "Q4_K_M"),
    # Qwen2.5(-Coder)-1.5B and -0.5B, the starter model and its draft: 1536 / 896 wide, 28 / 24
    # layers, 12 / 14 heads over 2 KV heads, FFN 8960 / 4864, 151,936 tokens, tied output. Written
    # as llama (no QKV bias: three vectors a layer, nothing to decode speed).
    "qwen2.5-1.5b": Layout(1536, 28, 12, 2, 8960, 32768, 151936, True, 1000000.0, "f16", "Q4_K_M"),
    "qwen2.5-0.5b": Layout(896, 24, 14, 2, 4864, 32768, 151936, True, 1000000.0, "f16", "Q4_K_M"),
}

WEIGHT_STD = 0.02
# The output projection is scaled up so the next-token distribution is peaked rather than flat,
# and the rows of the control tokens are zero: their logit is then 0 while the best token's is
# far above, so a tiny model never ends (or opens a turn) on its own; only a finished grammar,
# which leaves end-of-generation as the one allowed token, stops it.
OUTPUT_STD = 0.5


def write_test_gguf(
    path: str | os.PathLike,
    *,
    layout: str = "tiny",
    seed: int = 0,
    quant: str | None = "default",
    chat_template: str | None = CHATML_TEMPLATE,
) -> Path:
    """Write a random-weight GGUF with ``layout``'s shapes to ``path`` and return the path.

    ``quant`` names a llama.cpp file type such as ``Q4_K_M`` (the weights are written unquantised
    to a temporary file, then quantised by ``llama_model_quantize``); ``"default"`` means the
    layout's own default (none for ``tiny``, Q4_K_M for the real shapes); ``None`` keeps F32/F16.
    ``chat_template`` is stored as ``tokenizer.chat_template`` (``None``: the file has none).
    """
    if layout not in LAYOUTS:
        raise ModelError(f"Unknown test-model layout {layout!r}.",
                         hint=f"Use one of: {', '.join(LAYOUTS)}.")
    spec = LAYOUTS[layout]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    quant = spec.default_quant if quant == "default" else quant
    if quant is None:
        _write_unquantised(path, spec, layout, seed, chat_template)
        return path
    ftype = quant_file_type(quant)
    raw = path.with_name(f".{path.name}.unquantised.tmp")
    try:
        _write_unquantised(raw, spec, layout, seed, chat_template)
        quantize_gguf(raw, path, ftype)
    finally:
        raw.unlink(missing_ok=True)
    return path


def quant_file_type(quant: str) -> int:
    """llama.cpp's file-type number for a name like ``Q4_K_M`` (case-insensitive)."""
    import gguf

    key = "MOSTLY_" + quant.upper()
    try:
        return int(gguf.LlamaFileType[key])
    except KeyError:
        names = [n.removeprefix("MOSTLY_") for n in gguf.LlamaFileType.__members__
                 if n.startswith("MOSTLY_")]
        raise ModelError(f"Unknown quantisation {quant!r}.",
                         hint=f"Use one of: {', '.join(names)}.") from None


def quantize_gguf(src: Path, dst: Path, ftype: int, *, n_threads: int = 0) -> None:
    """Quantise ``src`` into ``dst`` with llama.cpp's own quantiser (``llama_model_quantize``)."""
    import llama_cpp

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.nthread = n_threads
    rc = llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(), params)
    if rc != 0:
        dst.unlink(missing_ok=True)
        raise ModelError(f"llama.cpp could not quantise {src} (return code {rc}).",
                         hint="Check the free disk space and that the quantisation type suits "
                              "the tensor shapes.")


def _write_unquantised(path: Path, spec: Layout, layout: str, seed: int,
                       chat_template: str | None) -> None:
    import gguf

    vocab = build_vocab(pad_to=spec.vocab_size)
    n_vocab = len(vocab.tokens)
    head_dim = spec.n_embd // spec.n_head
    n_embd_kv = head_dim * spec.n_head_kv
    weight_dtype = np.float16 if spec.dtype == "f16" else np.float32

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name(f"searchain-test-{layout}")
    w.add_context_length(spec.context_length)
    w.add_embedding_length(spec.n_embd)
    w.add_block_count(spec.n_layer)
    w.add_feed_forward_length(spec.n_ff)
    w.add_head_count(spec.n_head)
    w.add_head_count_kv(spec.n_head_kv)
    w.add_rope_dimension_count(head_dim)
    w.add_rope_freq_base(spec.rope_theta)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(n_vocab)
    w.add_file_type(int(gguf.LlamaFileType.MOSTLY_F16 if spec.dtype == "f16"
                        else gguf.LlamaFileType.ALL_F32))
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(vocab.tokens)
    w.add_token_types(vocab.token_types)
    w.add_token_merges(vocab.merges)
    w.add_bos_token_id(vocab.bos_id)
    w.add_eos_token_id(vocab.eos_id)
    w.add_pad_token_id(vocab.bos_id)
    w.add_add_bos_token(False)
    if chat_template is not None:
        w.add_chat_template(chat_template)

    shapes: list[tuple[str, tuple[int, ...], type]] = [
        ("token_embd.weight", (n_vocab, spec.n_embd), weight_dtype),
        ("output_norm.weight", (spec.n_embd,), np.float32),
    ]
    if not spec.tied_embeddings:
        shapes.append(("output.weight", (n_vocab, spec.n_embd), weight_dtype))
    for i in range(spec.n_layer):
        shapes += [
            (f"blk.{i}.attn_norm.weight", (spec.n_embd,), np.float32),
            (f"blk.{i}.attn_q.weight", (spec.n_embd, spec.n_embd), weight_dtype),
            (f"blk.{i}.attn_k.weight", (n_embd_kv, spec.n_embd), weight_dtype),
            (f"blk.{i}.attn_v.weight", (n_embd_kv, spec.n_embd), weight_dtype),
            (f"blk.{i}.attn_output.weight", (spec.n_embd, spec.n_embd), weight_dtype),
            (f"blk.{i}.ffn_norm.weight", (spec.n_embd,), np.float32),
            (f"blk.{i}.ffn_gate.weight", (spec.n_ff, spec.n_embd), weight_dtype),
            (f"blk.{i}.ffn_up.weight", (spec.n_ff, spec.n_embd), weight_dtype),
            (f"blk.{i}.ffn_down.weight", (spec.n_embd, spec.n_ff), weight_dtype),
        ]
    # Declare every tensor first, then stream the data one tensor at a time: an 8B layout never
    # has to sit in memory whole.
    for name, shape, dtype in shapes:
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        w.add_tensor_info(name, shape, np.dtype(dtype), nbytes)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    values = _RandomValues(seed)
    for name, shape, dtype in shapes:
        if len(shape) == 1:  # norm weights: ones keep activations in a sane range
            w.write_tensor_data(np.ones(shape, dtype=np.float32))
        elif name == "output.weight":
            out = values.take(shape, np.float32) * (OUTPUT_STD / WEIGHT_STD)
            out[[i for i, t in enumerate(vocab.token_types) if t == TOKEN_CONTROL]] = 0.0
            w.write_tensor_data(out.astype(dtype))
        else:
            w.write_tensor_data(values.take(shape, dtype))
    w.close()


class _RandomValues:
    """Normal(0, WEIGHT_STD) values. Big tensors reuse a 4M-value pool at random offsets: values
    do not affect speed, and drawing billions of fresh normals would take minutes."""

    POOL = 1 << 22

    def __init__(self, seed: int):
        self._rng = np.random.default_rng(seed)
        self._pool = (self._rng.standard_normal(self.POOL) * WEIGHT_STD).astype(np.float32)

    def take(self, shape: tuple[int, ...], dtype) -> np.ndarray:
        size = int(np.prod(shape))
        if size <= self.POOL:
            start = int(self._rng.integers(0, self.POOL - size + 1))
            return self._pool[start:start + size].astype(dtype).reshape(shape)
        rolled = np.roll(self._pool, int(self._rng.integers(0, self.POOL))).astype(dtype)
        return np.resize(rolled, shape)
