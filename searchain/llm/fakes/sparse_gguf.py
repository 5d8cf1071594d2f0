"""GGUF files that claim gigabytes and hold kilobytes: a valid header, then a sparse hole.

``write_sparse_gguf(path, 8 * 10**9)`` writes a real GGUF header (architecture, context length,
layers, heads, chat template, optional vocabulary, and a tensor table whose Q4_K tensors add up
to the requested size) and extends the file to that size with ``truncate``, which on every
common filesystem allocates no blocks. ``stat`` reports 8 GB, ``du`` a few kilobytes. Model
discovery's tests and benchmark lay out whole fake homes of such files; llama.cpp could not load
them (the weights are zeros), and nothing that only reads headers can tell.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..chat_templates import CHATML_TEMPLATE

Q4_K_BLOCK = (256, 144)  # elements, bytes per block
HEADER_ALLOWANCE = 1 << 20  # room left for the header before the tensors' declared data...
PER_TOKEN_ALLOWANCE = 64  # ...and for each token and merge of a vocabulary


def write_sparse_gguf(path: str | os.PathLike, size_bytes: int = 0, *, arch: str = "llama",
                      name: str | None = None, context_length: int = 8192, n_layers: int = 4,
                      n_embd: int = 2048, n_head: int = 16, n_head_kv: int = 4,
                      vocab_size: int = 0, chat_template: str | None = CHATML_TEMPLATE) -> Path:
    """Write the header, then extend ``path`` to ``size_bytes`` without writing the bytes.

    ``vocab_size`` tokens (``tok0``, ``tok1``...) and as many merges make the header as long as a
    real model's (150,000 for Qwen's); 0 leaves the tokenizer out. ``size_bytes`` below the
    header's own length keeps the file as written."""
    import gguf
    import numpy as np

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_name(name or path.stem)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
    writer.add_context_length(context_length)
    writer.add_block_count(n_layers)
    writer.add_embedding_length(n_embd)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head_kv)
    if vocab_size:  # where llama.cpp's converter puts them: tokens, types, merges, then ids
        writer.add_tokenizer_model("gpt2")
        writer.add_token_list([f"tok{i}" for i in range(vocab_size)])
        writer.add_token_types([1] * vocab_size)
        writer.add_token_merges([f"t o{i}" for i in range(vocab_size)])
        writer.add_bos_token_id(0)
        writer.add_eos_token_id(1)
    if chat_template:  # after the vocabulary, as in real files
        writer.add_chat_template(chat_template)
    block_elems, block_bytes = Q4_K_BLOCK
    room = HEADER_ALLOWANCE + PER_TOKEN_ALLOWANCE * vocab_size
    per_layer = max(1, (size_bytes - room) // max(1, n_layers) // block_bytes)
    for layer in range(n_layers):
        writer.add_tensor_info(f"blk.{layer}.ffn_up.weight", (per_layer, block_elems), np.dtype(np.float32),
                               per_layer * block_bytes, raw_dtype=gguf.GGMLQuantizationType.Q4_K)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    writer.close()
    if size_bytes > path.stat().st_size:
        os.truncate(path, size_bytes)  # a hole: no blocks written
    return path
