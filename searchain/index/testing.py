"""A tiny, randomly initialised cross-encoder for tests (no download, builds in about a second).

Its relevance scores are meaningless but deterministic, and it is a real
``BertForSequenceClassification`` with a real WordPiece tokenizer, saved and loaded exactly like
a downloaded ``cross-encoder/...`` checkpoint, so everything around the model is exercised.
"""

from __future__ import annotations

from pathlib import Path

from ..reader.testing import tiny_vocabulary, write_tiny_tokenizer


def write_tiny_cross_encoder(path: str | Path, *, seed: int = 0, init_std: float = 0.5) -> Path:
    """Build a 2-layer, hidden-size-32 cross-encoder with random weights (seeded), save it and
    its tokenizer to ``path`` (created), and return ``path``.

    ``init_std`` replaces BERT's initialiser (0.02): at that scale every pair scores nearly the
    same, and a re-ranking test needs scores, and so orders, that visibly differ.
    """
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    write_tiny_tokenizer(path)
    config = BertConfig(vocab_size=len(tiny_vocabulary()), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=512,
                        num_labels=1, initializer_range=init_std)
    torch.manual_seed(seed)
    model = BertForSequenceClassification(config)
    model.save_pretrained(str(path))
    return path
