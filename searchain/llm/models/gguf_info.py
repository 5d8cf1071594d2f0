"""Model facts read from a GGUF file's header, without loading the weights.

``read_model_facts(path)`` parses the metadata and tensor table with the ``gguf`` package's
reader (the file is memory-mapped, never read whole), so listing a models folder of
multi-gigabyte files takes milliseconds. A missing, foreign or truncated file raises
``ModelError`` naming the path and saying what to do.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import ModelError

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

    def kv_cache_bytes(self, n_ctx: int) -> int:
        """Bytes of an F16 KV cache for ``n_ctx`` tokens (keys + values, every layer)."""
        if not self.head_count:
            return 0
        head_dim = self.embedding_length // self.head_count
        keys, values = self.key_length or head_dim, self.value_length or head_dim
        kv_heads = self.head_count_kv or self.head_count
        return 2 * n_ctx * self.n_layers * kv_heads * (keys + values)


def read_model_facts(path: str | os.PathLike) -> ModelFacts:
    """Read ``path``'s GGUF metadata; ``ModelError`` if missing, not a GGUF, or damaged."""
    path = Path(path)
    _check_is_gguf(path)
    import gguf

    try:
        reader = gguf.GGUFReader(str(path), "r")
    except Exception as exc:  # the reader raises struct/index/value errors on damaged headers
        raise ModelError(
            f"{path} is damaged or truncated: its GGUF header cannot be parsed ({exc}).",
            hint="Download the file again (`searchain models pull NAME` resumes), or pick another.",
        ) from exc
    file_size = path.stat().st_size
    data_end = max((int(t.data_offset) + int(t.n_bytes) for t in reader.tensors), default=0)
    if data_end > file_size:
        raise ModelError(
            f"{path} is truncated: its tensors need {data_end:,} bytes but the file has "
            f"{file_size:,}.",
            hint="The download was probably interrupted: pull it again (it resumes).",
        )
    fields = {name: _field_value(f) for name, f in reader.fields.items()
              if name != "tokenizer.ggml.merges"}
    arch = str(fields.get("general.architecture", "unknown"))
    tokens = reader.fields.get("tokenizer.ggml.tokens")
    return ModelFacts(
        path=path,
        architecture=arch,
        name=str(fields.get("general.name") or path.stem),
        parameters=sum(int(t.n_elements) for t in reader.tensors),
        quantisation=_quantisation(fields.get("general.file_type"), reader.tensors),
        context_length=int(fields.get(f"{arch}.context_length", 0) or 0),
        file_size=file_size,
        chat_template=fields.get("tokenizer.chat_template"),
        vocab_size=len(tokens.data) if tokens is not None else 0,
        n_layers=int(fields.get(f"{arch}.block_count", 0) or 0),
        embedding_length=int(fields.get(f"{arch}.embedding_length", 0) or 0),
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


def _field_value(field) -> Any:
    """A ReaderField's Python value (str, int, float, bool, or list of them)."""
    import gguf

    types = list(field.types)
    if not types:
        return None

    def scalar(part_index: int, vtype) -> Any:
        part = field.parts[part_index]
        if vtype == gguf.GGUFValueType.STRING:
            return bytes(part).decode("utf-8", errors="replace")
        value = part[0]
        return bool(value) if vtype == gguf.GGUFValueType.BOOL else value.item()

    if types[0] == gguf.GGUFValueType.ARRAY:
        return [scalar(i, types[-1]) for i in field.data]
    return scalar(field.data[0], types[0])


def _first_int(value: Any) -> int:
    """Head counts may be per-layer arrays in some architectures; take the first."""
    if isinstance(value, list):
        value = value[0] if value else 0
    return int(value or 0)


def _quantisation(file_type: Any, tensors) -> str:
    import gguf

    if file_type is not None:
        try:
            return gguf.LlamaFileType(int(file_type)).name.removeprefix("MOSTLY_").replace(
                "ALL_", "")
        except ValueError:
            pass
    # No (or an unknown) file type: name the tensor type holding most of the bytes.
    by_bytes: Counter[str] = Counter()
    for t in tensors:
        by_bytes[t.tensor_type.name] += int(t.n_bytes)
    return by_bytes.most_common(1)[0][0] if by_bytes else "unknown"
