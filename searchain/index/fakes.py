"""A tiny, randomly initialised cross-encoder for tests (no download, builds in about a second).

Its relevance scores are meaningless but deterministic, and it is a real
``BertForSequenceClassification`` with a real WordPiece tokenizer, saved and loaded exactly like
a downloaded ``cross-encoder/...`` checkpoint, so everything around the model is exercised.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ..reader.fakes import tiny_vocabulary, write_tiny_tokenizer


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


def write_tiny_embedder(path: str | Path, *, seed: int = 0) -> Path:
    """A sentence-transformers bi-encoder (2-layer, 32-d BERT, mean pooling) with random weights
    (seeded), saved to ``path`` like a downloaded model folder; returns ``path``.

    Its similarities are meaningless but deterministic and differ from MiniLM's, which is what a
    test of a second embedding model needs: a real model whose scores visibly change a fusion.
    """
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import BertConfig, BertModel

    try:  # sentence-transformers >= 6 moved the modules
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:
        from sentence_transformers.models import Pooling, Transformer

    path = Path(path)
    base = path / "_base"
    base.mkdir(parents=True, exist_ok=True)
    write_tiny_tokenizer(base)
    config = BertConfig(vocab_size=len(tiny_vocabulary()), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=512)
    torch.manual_seed(seed)
    BertModel(config).save_pretrained(str(base))
    transformer = Transformer(str(base), max_seq_length=128)
    dim = config.hidden_size
    pooling = Pooling(dim, pooling_mode="mean")
    SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(path))
    shutil.rmtree(base)
    return path
