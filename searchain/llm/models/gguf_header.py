"""A GGUF file's header, read as a stream: metadata and tensor table, never the weights.

Why not ``gguf.GGUFReader``: it builds a numpy view for every string of the vocabulary, so a
135M-parameter model with 49k tokens takes about 2.4 s to open on a 2-core machine, and a
150k-token vocabulary several seconds; listing a dozen models would stall for a minute. Here the
big arrays (tokens, merges, scores) are skipped, not decoded: their element count is kept (the
vocabulary size is all anyone asks of them) and the reader jumps over them, so a header costs
milliseconds and reads a few megabytes at most, whatever the file's size.

The format (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md), version 2 and 3::

    magic "GGUF" | version u32 | tensor count u64 | metadata count u64
    metadata:  key (u64 length + UTF-8) | value type u32 | value
    tensors:   name | n_dims u32 | dims u64 x n_dims | ggml type u32 | offset u64 (from data start)
    data:      starts at the next multiple of general.alignment (default 32)

Big-endian files (version read byte-swapped) are read too. Every length is checked against the
file's size before it is followed, so a damaged header raises ``HeaderError`` instead of reading
gigabytes or allocating them.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from typing import Any, BinaryIO

GGUF_MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32
WINDOW = 1 << 20  # bytes read at a time; most headers fit in a few windows
# Arrays up to this many elements are decoded (per-layer head counts, tags); longer ones
# (vocabularies, merges, scores) are summarised by their length.
SMALL_ARRAY = 4096
MAX_STRING = 64 << 20  # a chat template is kilobytes; a longer string means a damaged header
MAX_COUNT = 1 << 32

# GGUF value types -> struct code (None: string, array).
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
STRING, ARRAY = 8, 9


class HeaderError(ValueError):
    """The header cannot be parsed: cut short, or holding impossible lengths or types."""


@dataclass(frozen=True)
class ArrayInfo:
    """A long metadata array, skipped: its element type and how many elements it holds."""

    item_type: int
    count: int


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]
    ggml_type: int
    offset: int  # from the start of the data section

    @property
    def n_elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass
class GGUFHeader:
    version: int
    fields: dict[str, Any] = field(default_factory=dict)  # arrays: list, or ArrayInfo when long
    tensors: list[TensorInfo] = field(default_factory=list)
    data_offset: int = 0  # absolute offset of the tensor data
    file_size: int = 0


class _Stream:
    """Reads ``fh`` through a sliding window so that skipping a long array never loads it."""

    def __init__(self, fh: BinaryIO, size: int):
        self.fh, self.size = fh, size
        self.base, self.data, self.pos = 0, b"", 0

    def _window(self, offset: int, need: int) -> None:
        if offset + need > self.size:
            raise HeaderError(f"the header runs past the end of the file (byte {offset + need:,} of "
                              f"{self.size:,})")
        self.fh.seek(offset)
        self.data = self.fh.read(max(need, WINDOW))
        self.base = offset
        if len(self.data) < need:
            raise HeaderError(f"the file ends at byte {offset + len(self.data):,}, inside the header")

    def take(self, n: int) -> memoryview:
        rel = self.pos - self.base
        if rel < 0 or rel + n > len(self.data):
            self._window(self.pos, n)
            rel = 0
        self.pos += n
        return memoryview(self.data)[rel:rel + n]

    def unpack(self, fmt: struct.Struct) -> Any:
        return fmt.unpack(self.take(fmt.size))[0]

    def skip(self, n: int) -> None:
        if self.pos + n > self.size:
            raise HeaderError("an array runs past the end of the file")
        self.pos += n


class _Parser:
    def __init__(self, stream: _Stream, endian: str):
        self.s = stream
        self.u32 = struct.Struct(endian + "I")
        self.u64 = struct.Struct(endian + "Q")
        self.scalars = {t: struct.Struct(endian + code) for t, code in _SCALARS.items()}

    def count(self, what: str) -> int:
        n = self.s.unpack(self.u64)
        if n > MAX_COUNT or n > self.s.size:
            raise HeaderError(f"impossible {what} ({n:,})")
        return n

    def string(self) -> str:
        n = self.s.unpack(self.u64)
        if n > MAX_STRING:
            raise HeaderError(f"a string of {n:,} bytes")
        return bytes(self.s.take(n)).decode("utf-8", errors="replace")

    def value(self, vtype: int) -> Any:
        if vtype in self.scalars:
            return self.s.unpack(self.scalars[vtype])
        if vtype == STRING:
            return self.string()
        if vtype == ARRAY:
            item = self.s.unpack(self.u32)
            n = self.count("array length")
            if n > SMALL_ARRAY:
                self.skip_items(item, n)
                return ArrayInfo(item, n)
            return [self.value(item) for _ in range(n)]
        raise HeaderError(f"unknown metadata type {vtype}")

    def skip_items(self, item: int, n: int) -> None:
        if item in self.scalars:
            self.s.skip(n * self.scalars[item].size)
        elif item == STRING:
            self._skip_strings(n)
        else:
            for _ in range(n):
                self.value(item)

    def _skip_strings(self, n: int) -> None:
        # The hot loop of a header read, once per vocabulary entry and merge (300,000 for a
        # Qwen model): locals only, offsets relative to the window, and nothing checked per
        # entry but whether the next length field is still inside the window. A damaged length
        # sends the offset past the window, and re-reading there fails on the file's end.
        s, unpack = self.s, self.u64.unpack_from
        data, rel = s.data, s.pos - s.base
        last = len(data) - 8
        for _ in range(n):
            if rel > last:
                s._window(s.base + rel, 8)
                data, rel = s.data, 0
                last = len(data) - 8
            rel += 8 + unpack(data, rel)[0]
        pos = s.base + rel
        if pos > s.size:
            raise HeaderError("a string array runs past the end of the file")
        s.pos = pos


def read_header(path: str | os.PathLike) -> GGUFHeader:
    """Parse ``path``'s GGUF header; ``HeaderError`` if it is not a readable GGUF header."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size < 24:
            raise HeaderError(f"the file has only {size} bytes")
        stream = _Stream(fh, size)
        if bytes(stream.take(4)) != GGUF_MAGIC:
            raise HeaderError("no GGUF magic")
        raw = bytes(stream.take(4))
        endian = "<"
        version = struct.unpack("<I", raw)[0]
        if version & 0xFFFF == 0:  # written on a big-endian machine
            endian, version = ">", struct.unpack(">I", raw)[0]
        if version not in (2, 3):
            raise HeaderError(f"GGUF version {version} (only 2 and 3 are read)")
        p = _Parser(stream, endian)
        n_tensors, n_fields = p.count("tensor count"), p.count("metadata count")
        header = GGUFHeader(version, file_size=size)
        for _ in range(n_fields):
            key = p.string()
            header.fields[key] = p.value(stream.unpack(p.u32))
        for _ in range(n_tensors):
            name = p.string()
            n_dims = stream.unpack(p.u32)
            if n_dims > 8:
                raise HeaderError(f"tensor {name!r} has {n_dims} dimensions")
            shape = tuple(stream.unpack(p.u64) for _ in range(n_dims))
            ggml_type = stream.unpack(p.u32)
            header.tensors.append(TensorInfo(name, shape, ggml_type, stream.unpack(p.u64)))
        alignment = header.fields.get("general.alignment", DEFAULT_ALIGNMENT)
        if not isinstance(alignment, int) or alignment <= 0:
            alignment = DEFAULT_ALIGNMENT
        header.data_offset = -(-stream.pos // alignment) * alignment
        return header
