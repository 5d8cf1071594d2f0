"""A tiny, randomly initialised DPR reader for tests (no download, builds in about a second).

Its spans and relevance scores are meaningless, but it has the real architecture, a real
``BertTokenizerFast`` with offset mapping, and is saved and loaded exactly like a downloaded
reader, so everything around the model (encoding, span decoding, batching, loading) is exercised.
"""

from __future__ import annotations

import string
from pathlib import Path

_SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
_WORDS = [
    "the", "of", "and", "in", "was", "is", "who", "what", "where", "when", "which", "city",
    "capital", "born", "river", "film", "director", "county", "state", "country", "year",
]


def tiny_vocabulary() -> list[str]:
    """Special tokens, single characters, their '##' continuations and a few whole words:
    enough for WordPiece to cover any ASCII text without [UNK]."""
    chars = list(string.ascii_lowercase + string.digits + string.punctuation)
    return _SPECIAL + chars + [f"##{c}" for c in string.ascii_lowercase + string.digits] + _WORDS


def write_tiny_tokenizer(path: Path):
    """Save ``tiny_vocabulary()`` as a lower-casing WordPiece tokenizer in ``path``; return it.

    transformers 5 takes the vocabulary as ``vocab=`` and silently ignores the older
    ``vocab_file=`` (leaving a 5-token vocabulary that maps every word to [UNK]), so the
    result is checked rather than trusted.
    """
    from transformers import BertTokenizerFast

    vocab = tiny_vocabulary()
    vocab_file = path / "vocab.txt"
    vocab_file.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    try:
        tokenizer = BertTokenizerFast(vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=True)
    except TypeError:  # transformers 4: only a vocabulary file
        tokenizer = BertTokenizerFast(vocab_file=str(vocab_file), do_lower_case=True)
    if len(tokenizer) < len(vocab):
        tokenizer = BertTokenizerFast(vocab_file=str(vocab_file), do_lower_case=True)
    if tokenizer.convert_tokens_to_ids("capital") == tokenizer.unk_token_id:
        raise RuntimeError("the tiny WordPiece tokenizer lost its vocabulary")
    tokenizer.save_pretrained(str(path))
    return tokenizer


def write_tiny_dpr_reader(path: str | Path, *, seed: int = 0) -> Path:
    """Build a 2-layer, hidden-size-32 ``transformers.DPRReader`` with random weights (seeded)
    and its tokenizer, save both to ``path`` (created), and return ``path``."""
    import torch
    from transformers import DPRConfig, DPRReader

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    write_tiny_tokenizer(path)
    config = DPRConfig(
        vocab_size=len(tiny_vocabulary()),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        projection_dim=0,
    )
    torch.manual_seed(seed)
    model = DPRReader(config)
    model.save_pretrained(str(path))
    return path
