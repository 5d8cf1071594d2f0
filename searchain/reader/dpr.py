"""The DPR reader (Karpukhin et al.): answer span + passage relevance, as SearChain's IR uses it.

Input per passage is ``[CLS] question [SEP] title [SEP] passage`` (DPR's reader format). The
span is decoded over passage tokens only, with end >= start and at most ``max_answer_tokens``
tokens, starting and ending on word boundaries, maximising start + end logit (the authors' code
took independent argmaxes over the whole input, which can land on the question or on [CLS]).
Character offsets come from the fast tokenizer's offset mapping, so ``answer`` is always exactly
``passage_text[start:end]``. Confidence is the raw relevance logit, compared with θ = 1.5.

transformers and torch are imported lazily, when a reader is constructed.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..config import AppPaths
from ..errors import ModelError
from ..events import CancelToken, EventCallback
from ..hub_folder import WEIGHT_FILES, loading_model_folder
from .base import ReaderResult

DEFAULT_DPR_READER = "facebook/dpr-reader-multiset-base"
MAX_SEQUENCE_TOKENS = 512  # BERT's position limit: longer passages are cut at the end


def reader_dir(paths: AppPaths, name: str = DEFAULT_DPR_READER) -> Path:
    """Where the reader ``name`` lives once downloaded: ``<models_dir>/readers/<name>``."""
    return paths.models_dir / "readers" / name


def is_dpr_reader_dir(path: Path) -> bool:
    """Whether ``path`` holds a loadable reader: a config, weights and a WordPiece vocabulary."""
    path = Path(path)
    return (
        (path / "config.json").is_file()
        and any((path / w).is_file() for w in WEIGHT_FILES)
        and ((path / "vocab.txt").is_file() or (path / "tokenizer.json").is_file())
    )


def resolve_dpr_reader(model_dir_or_name: str | os.PathLike, models_dir: Path | None = None) -> Path:
    """A folder path as given, else ``<models_dir>/readers/<name>``; ModelError if neither holds a reader."""
    candidate = Path(model_dir_or_name).expanduser()
    tried = [candidate]
    if not is_dpr_reader_dir(candidate) and models_dir is not None:
        candidate = Path(models_dir) / "readers" / str(model_dir_or_name)
        tried.append(candidate)
    if is_dpr_reader_dir(candidate):
        return candidate
    raise ModelError(
        f"No DPR reader found at {' or '.join(str(t) for t in tried)} "
        "(expected config.json, model weights and vocab.txt).",
        hint="Download it with `searchain reader pull` (needs a network connection once), "
        "or set the reader to 'llm' to use the chat model as reader.",
    )


class DPRSpanReader:
    """``Reader`` backed by a ``transformers.DPRReader`` checkpoint folder (or a name under models_dir)."""

    def __init__(
        self,
        model_dir_or_name: str | os.PathLike = DEFAULT_DPR_READER,
        *,
        threshold: float = 1.5,
        max_answer_tokens: int = 16,
        models_dir: Path | None = None,
        batch_size: int = 8,
    ):
        if max_answer_tokens < 1:
            raise ValueError(f"max_answer_tokens must be >= 1, got {max_answer_tokens}")
        self.path = resolve_dpr_reader(model_dir_or_name, models_dir)
        self.name = f"dpr:{self.path.name}"
        self.threshold = float(threshold)
        self.max_answer_tokens = int(max_answer_tokens)
        self.batch_size = max(1, int(batch_size))
        with loading_model_folder("DPR reader", self.path, needs="torch and transformers",
                                  otherwise="use the LLM reader"):
            import torch  # noqa: F401  (fail here, clearly, if torch is missing)
            from transformers import BertTokenizerFast, DPRReader

            from ..quiet import no_transformers_progress

            with no_transformers_progress():
                self._tokenizer = BertTokenizerFast.from_pretrained(str(self.path))
                self._model = DPRReader.from_pretrained(str(self.path))
        self._model.eval()

    # -- Reader protocol -------------------------------------------------------------------

    def read(self, question: str, title: str, passage_text: str) -> ReaderResult:
        return self.read_many(question, [(title, passage_text)])[0]

    def read_many(self, question: str, passages: list[tuple[str, str]]) -> list[ReaderResult]:
        """Read every (title, text) in batches; results come back in input order."""
        results: list[ReaderResult] = []
        for i in range(0, len(passages), self.batch_size):
            results.extend(self._read_batch(question, passages[i : i + self.batch_size]))
        return results

    # -- internals -------------------------------------------------------------------------

    def _encode(self, question: str, title: str, text: str):
        """Token ids, and per token the (start, end) offset into ``text`` or None (not passage)
        plus whether a word may start/end there."""
        tok = self._tokenizer
        head = tok(question, title or "", add_special_tokens=True, truncation="only_first",
                   max_length=MAX_SEQUENCE_TOKENS // 2)["input_ids"]
        body = tok(text, add_special_tokens=False, return_offsets_mapping=True)
        room = max(0, MAX_SEQUENCE_TOKENS - len(head))
        body_ids = body["input_ids"][:room]
        offsets = body["offset_mapping"][:room]
        words = body.word_ids()[: len(body_ids)]
        n = len(body_ids)
        # A span may only start where a word starts and end where one ends (no "##" halves).
        can_start = [i == 0 or words[i] != words[i - 1] for i in range(n)]
        can_end = [i == n - 1 or words[i] != words[i + 1] for i in range(n)]
        if n and len(body["input_ids"]) > n:
            # The token after the cut continues the last word only if it shares its word id.
            can_end[-1] = body.word_ids()[n] != words[-1]
        return head + body_ids, len(head), offsets, can_start, can_end

    def _read_batch(self, question: str, batch: list[tuple[str, str]]) -> list[ReaderResult]:
        import torch

        encoded = [self._encode(question, title, text) for title, text in batch]
        width = max(len(e[0]) for e in encoded)
        pad = self._tokenizer.pad_token_id or 0
        ids = torch.full((len(batch), width), pad, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for row, (input_ids, *_rest) in enumerate(encoded):
            ids[row, : len(input_ids)] = torch.tensor(input_ids, dtype=torch.long)
            mask[row, : len(input_ids)] = 1
        with torch.inference_mode():
            out = self._model(input_ids=ids, attention_mask=mask)
        results = []
        for row, ((_title, text), (_ids, body_at, offsets, can_start, can_end)) in enumerate(zip(batch, encoded)):
            relevance = float(out.relevance_logits[row])
            n = len(offsets)
            start_logits = out.start_logits[row, body_at : body_at + n]
            end_logits = out.end_logits[row, body_at : body_at + n]
            span = best_span(start_logits, end_logits, can_start, can_end, self.max_answer_tokens)
            if span is None:
                results.append(ReaderResult("", 0, 0, relevance, self.threshold))
                continue
            s, e = offsets[span[0]][0], offsets[span[1]][1]
            results.append(ReaderResult(text[s:e], s, e, relevance, self.threshold))
        return results


def best_span(start_logits, end_logits, can_start, can_end, max_tokens: int) -> tuple[int, int] | None:
    """Token indices (i, j), i <= j < i + max_tokens, maximising start[i] + end[j] among allowed
    boundaries; None when there is no passage token. Works on 1-D torch tensors."""
    import torch

    n = int(start_logits.shape[0])
    if n == 0:
        return None
    scores = start_logits.float()[:, None] + end_logits.float()[None, :]
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    allowed = (j >= i) & (j - i < max_tokens)
    allowed &= torch.tensor(can_start, dtype=torch.bool)[:, None]
    allowed &= torch.tensor(can_end, dtype=torch.bool)[None, :]
    if not bool(allowed.any()):
        # Every word is longer than max_tokens pieces: fall back to any in-bound span.
        allowed = (j >= i) & (j - i < max_tokens)
    scores = scores.masked_fill(~allowed, float("-inf"))
    flat = int(torch.argmax(scores))
    return flat // n, flat % n


def download_dpr_reader(
    paths: AppPaths,
    name: str = DEFAULT_DPR_READER,
    *,
    endpoint: str | None = None,
    on_event: EventCallback | None = None,
    cancel: CancelToken | None = None,
) -> Path:
    """Fetch the reader ``name`` from the Hugging Face Hub into ``reader_dir(paths, name)``.

    All or nothing (``hub_folder.download_model_folder``): an interrupted download never leaves
    a half reader that ``auto`` would pick. Offline (or with ``HF_HUB_OFFLINE=1``) this raises
    ModelError saying so.
    """
    from ..hub_folder import download_model_folder

    return download_model_folder(
        name, reader_dir(paths, name), what="DPR reader", is_complete=is_dpr_reader_dir,
        manual_hint="Or set the reader to 'llm' to use the chat model as reader.",
        endpoint=endpoint, on_event=on_event, cancel=cancel)
