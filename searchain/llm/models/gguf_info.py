"""Model facts read from a GGUF file's header, without loading the weights.

``read_model_facts(path)`` parses the metadata and tensor table as a stream (``gguf_header``:
the vocabulary is skipped, not decoded, and the weights are never read), so listing a models
folder of multi-gigabyte files takes milliseconds per file. A missing, foreign or truncated file raises
``ModelError`` naming the path and saying what to do.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import ModelError
from .gguf_header import ArrayInfo, HeaderError, TensorInfo, read_header

GGUF_MAGIC = b"GGUF"


@dataclass(frozen=True)
class ModelFacts:
    path: Path
    architecture: str
    name: str
    parameters: int  # total number of weights, summed over the tensor table
    quantisation: str  # e.g. "Q4_K_M", "F16", "F32"
    context_length: int  # the context the model was trained for (0 if the file does not say)
    file_size: int  # bytes
    chat_template: str | None
    vocab_size: int
    n_layers: int
    embedding_length: int = 0
    head_count_kv: int = 0
    head_count: int = 0
    key_length: int = 0  # per-head key width where the file says (Qwen3: 128, not width/heads)
    value_length: int = 0

    @property
    def parameters_label(self) -> str:
        """``1.2B``, ``135M``...: how model cards name sizes."""
        n = self.parameters
        for unit, scale in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
            if n >= scale:
                return f"{n / scale:.1f}{unit}"
        return str(n)

    @property
    def template_family(self) -> str:
        """The chat template's family, told from its markers: ``qwen3``, ``qwen2.5``, ``chatml``,
        ``llama3``, ``gemma``, ``phi3``, ``mistral``, ``llama2``, ``deepseek``; ``other`` for a
        template none of these; ``none`` when the file has no template (a base model)."""
        return template_family(self.chat_template)

    def kv_cache_bytes(self, n_ctx: int) -> int:
        """Bytes of an F16 KV cache for ``n_ctx`` tokens (keys + values, every layer)."""
        if not self.head_count:
            return 0
        head_dim = self.embedding_length // self.head_count
        keys, values = self.key_length or head_dim, self.value_length or head_dim
        kv_heads = self.head_count_kv or self.head_count
        return 2 * n_ctx * self.n_layers * kv_heads * (keys + values)


def template_family(template: str | None) -> str:
    """See ``ModelFacts.template_family``. The first marker found decides, most specific first."""
    if not template:
        return "none"
    if "<|im_start|>" in template:
        if "enable_thinking" in template or "<think>" in template:
            return "qwen3"
        return "qwen2.5" if "You are Qwen" in template else "chatml"
    for family, marker in (("llama3", "<|start_header_id|>"), ("gemma", "<start_of_turn>"),
                           ("deepseek", "<\uff5cUser\uff5c>"), ("phi3", "<|assistant|>"),
                           ("llama2", "<<SYS>>"), ("mistral", "[INST]")):
        if marker in template:
            return family
    return "other"


def read_model_facts(path: str | os.PathLike) -> ModelFacts:
    """Read ``path``'s GGUF metadata; ``ModelError`` if missing, not a GGUF, or damaged."""
    path = Path(path)
    _check_is_gguf(path)
    try:
        header = read_header(path)
    except (HeaderError, OSError) as exc:
        raise ModelError(
            f"{path} is damaged or truncated: its GGUF header cannot be parsed ({exc}).",
            hint="Download the file again (`searchain models pull NAME` resumes), or pick another.",
        ) from exc
    data_end = header.data_offset + max((t.offset + _n_bytes(t) for t in header.tensors), default=0)
    if header.tensors and data_end > header.file_size:
        raise ModelError(
            f"{path} is truncated: its tensors need {data_end:,} bytes but the file has "
            f"{header.file_size:,}.",
            hint="The download was probably interrupted: pull it again (it resumes).",
        )
    fields = header.fields
    arch = str(fields.get("general.architecture", "unknown"))
    tokens = fields.get("tokenizer.ggml.tokens")
    template = fields.get("tokenizer.chat_template")
    return ModelFacts(
        path=path,
        architecture=arch,
        name=str(fields.get("general.name") or path.stem),
        parameters=sum(t.n_elements for t in header.tensors),
        quantisation=_quantisation(fields.get("general.file_type"), header.tensors),
        context_length=_first_int(fields.get(f"{arch}.context_length")),
        file_size=header.file_size,
        chat_template=template if isinstance(template, str) else None,
        vocab_size=_length(tokens),
        n_layers=_first_int(fields.get(f"{arch}.block_count")),
        embedding_length=_first_int(fields.get(f"{arch}.embedding_length")),
        head_count=_first_int(fields.get(f"{arch}.attention.head_count")),
        head_count_kv=_first_int(fields.get(f"{arch}.attention.head_count_kv")),
        key_length=_first_int(fields.get(f"{arch}.attention.key_length")),
        value_length=_first_int(fields.get(f"{arch}.attention.value_length")),
    )


def _check_is_gguf(path: Path) -> None:
    if not path.exists():
        raise ModelError(f"Model file {path} does not exist.",
                         hint="Check the path in Settings, or run `searchain models list` to see "
                              "the models you have and `searchain models pull NAME` to get one.")
    if not path.is_file():
        raise ModelError(f"{path} is not a file.", hint="Point to a .gguf file, not a folder.")
    try:
        with path.open("rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise ModelError(f"Cannot read model file {path}: {exc}",
                         hint="Check the file's permissions.") from exc
    if magic != GGUF_MAGIC:
        raise ModelError(
            f"{path} is not a GGUF file (it starts with {magic!r}, not b'GGUF').",
            hint="llama.cpp needs a .gguf model: download a GGUF build of the model "
                 "(see `searchain models catalogue`).",
        )


def _length(value: Any) -> int:
    """Elements in a metadata array, decoded (a list) or skipped (``ArrayInfo``)."""
    if isinstance(value, ArrayInfo):
        return value.count
    return len(value) if isinstance(value, list) else 0


def _first_int(value: Any) -> int:
    """Head counts may be per-layer arrays in some architectures; take the first."""
    if isinstance(value, list):
        value = value[0] if value else 0
    try:
        return int(value or 0)
    except (TypeError, ValueError):  # a string or a skipped array where a number belongs
        return 0


def _n_bytes(tensor: TensorInfo) -> int:
    """The tensor's size in the file; 0 for a type this gguf package does not know (a newer
    quantisation), whose size then goes unchecked."""
    import gguf

    try:
        block, type_size = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType(tensor.ggml_type)]
    except (ValueError, KeyError):
        return 0
    return tensor.n_elements // block * type_size


def _quantisation(file_type: Any, tensors: list[TensorInfo]) -> str:
    import gguf

    if isinstance(file_type, int):
        try:
            return gguf.LlamaFileType(file_type).name.removeprefix("MOSTLY_").replace("ALL_", "")
        except ValueError:
            pass
    # No (or an unknown) file type: name the tensor type holding most of the bytes.
    by_bytes: Counter[str] = Counter()
    for t in tensors:
        try:
            by_bytes[gguf.GGMLQuantizationType(t.ggml_type).name] += _n_bytes(t)
        except ValueError:
            by_bytes[f"type {t.ggml_type}"] += 0
    return by_bytes.most_common(1)[0][0] if by_bytes else "unknown"
