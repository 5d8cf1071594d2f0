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


def write_tiny_dpr_reader(path: str | Path, *, seed: int = 0) -> Path:
    """Build a 2-layer, hidden-size-32 ``transformers.DPRReader`` with random weights (seeded)
    and its tokenizer, save both to ``path`` (created), and return ``path``."""
    import torch
    from transformers import BertTokenizerFast, DPRConfig, DPRReader

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    vocab = tiny_vocabulary()
    vocab_file = path / "vocab.txt"
    vocab_file.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab_file=str(vocab_file), do_lower_case=True)
    config = DPRConfig(
        vocab_size=len(vocab),
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
    tokenizer.save_pretrained(str(path))
    return path
