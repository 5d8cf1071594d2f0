"""A GGUF file's header, read as a stream: metadata and tensor table, never the weights.

Why not ``gguf.GGUFReader``: it builds a numpy view for every string of the vocabulary, so a
135M-parameter model with 49k tokens takes about 2.4 s to open on a 2-core machine, and a
150k-token vocabulary several seconds; listing a dozen models would stall for a minute. Here the
big arrays (tokens, merges, scores) are skipped, not decoded: their element count is kept (the
vocabulary size is all anyone asks of them) and the reader jumps over them, so a header costs
milliseconds and reads a few megabytes at most, whatever the file's size. Arrays of numbers are
jumped by arithmetic; a long array of strings (whose lengths are only known one by one) is
leapt by finding what follows it and checking everything after (``_leap``), and stepped through
string by string only where that check fails.

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
WINDOW = 1 << 16  # bytes read at a time by the parser...
CHUNK = 1 << 18  # ...and by the search for what follows a long string array
# Arrays up to this many elements are decoded (per-layer head counts, tags); longer ones
# (vocabularies, merges, scores) are summarised by their length.
SMALL_ARRAY = 4096
MAX_STRING = 64 << 20  # a chat template is kilobytes; a longer string means a damaged header
MAX_COUNT = 1 << 32
# Jumping over a long string array (``_leap``): how many look-alike names are tried, the
# namespaces keys start with, how tensor names start, and the longest string value a guessed
# position may hold before it is taken for a wrong guess.
LEAP_CANDIDATES = 16
NAMESPACES = ("general", "tokenizer", "split", "quantize", "adapter", "clip")
TENSOR_NAMES = ("token_embd.", "blk.", "output", "rope_", "position_embd.", "tok_embd.")
LEAP_STRING = 4 << 20

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
        self.max_string = MAX_STRING

    def count(self, what: str) -> int:
        n = self.s.unpack(self.u64)
        if n > MAX_COUNT or n > self.s.size:
            raise HeaderError(f"impossible {what} ({n:,})")
        return n

    def string(self) -> str:
        n = self.s.unpack(self.u64)
        if n > self.max_string:
            raise HeaderError(f"a string of {n:,} bytes")
        return bytes(self.s.take(n)).decode("utf-8", errors="replace")

    def key(self) -> str:
        """A key or tensor name as writers write them: ASCII, printable, up to 256 bytes."""
        n = self.s.unpack(self.u64)
        if not 0 < n <= 256:
            raise HeaderError(f"a name of {n:,} bytes")
        raw = bytes(self.s.take(n))
        if not raw.isascii() or not raw.decode().isprintable():
            raise HeaderError("a name that is not printable ASCII")
        return raw.decode()

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
        if not 0 <= s.pos - s.base <= len(s.data) - 8:  # the window was moved elsewhere
            s._window(s.pos, 8)
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


def read_header(path: str | os.PathLike, *, leap: bool = True) -> GGUFHeader:
    """Parse ``path``'s GGUF header; ``HeaderError`` if it is not a readable GGUF header.

    ``leap`` (the default) jumps over a long string array by finding the key after it (see
    ``_leap``) instead of stepping through every string; ``leap=False`` always steps."""
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
        _body(p, header, 0, n_fields, n_tensors, leap=leap, strict=False)
        return header


def _body(p: _Parser, header: GGUFHeader, first: int, n_fields: int, n_tensors: int, *,
          leap: bool, strict: bool) -> None:
    """Fields ``first``.. of ``n_fields``, then the tensor table, into ``header``. ``strict``
    (a leap's guess being checked) refuses anything a GGUF writer would not write."""
    s = p.s
    for i in range(first, n_fields):
        key = p.key() if strict else p.string()
        if strict and key in header.fields:
            raise HeaderError(f"key {key!r} twice")
        vtype = s.unpack(p.u32)
        if vtype == ARRAY:
            item = s.unpack(p.u32)
            n = p.count("array length")
            if item == STRING and n > SMALL_ARRAY and leap and n_tensors:
                rest = _leap(p, header, key, n, i + 1, n_fields, n_tensors)
                if rest is not None:
                    header.fields[key] = ArrayInfo(item, n)
                    header.fields.update(rest.fields)
                    header.tensors, header.data_offset = rest.tensors, rest.data_offset
                    return
            if strict and (item == ARRAY or (item == STRING and n > SMALL_ARRAY)):
                # Under a guess, nothing slow: a long string array is leapt or the guess fails.
                raise HeaderError("an array a guess cannot check quickly")
            if n > SMALL_ARRAY:
                p.skip_items(item, n)
                header.fields[key] = ArrayInfo(item, n)
            else:
                header.fields[key] = [p.value(item) for _ in range(n)]
        else:
            header.fields[key] = p.value(vtype)
    for _ in range(n_tensors):
        name = p.key() if strict else p.string()
        n_dims = s.unpack(p.u32)
        if n_dims > 8 or (strict and n_dims == 0):
            raise HeaderError(f"tensor {name!r} has {n_dims} dimensions")
        shape = tuple(s.unpack(p.u64) for _ in range(n_dims))
        ggml_type = s.unpack(p.u32)
        header.tensors.append(TensorInfo(name, shape, ggml_type, s.unpack(p.u64)))
    alignment = header.fields.get("general.alignment", DEFAULT_ALIGNMENT)
    if not isinstance(alignment, int) or alignment <= 0:
        alignment = DEFAULT_ALIGNMENT
    header.data_offset = -(-s.pos // alignment) * alignment
    if strict:
        _check_tensor_table(header, alignment)


def _check_tensor_table(header: GGUFHeader, alignment: int) -> None:
    """What every GGUF writer gives a tensor table: names once each, no empty dimension, known
    type numbers, aligned offsets starting at 0, data inside the file."""
    t = header.tensors
    if len({x.name for x in t}) != len(t):
        raise HeaderError("a tensor name twice")
    if any(0 in x.shape or x.ggml_type > 255 or x.offset % alignment for x in t):
        raise HeaderError("a tensor entry no writer writes")
    if min(x.offset for x in t) != 0 or header.data_offset + max(x.offset for x in t) > header.file_size:
        raise HeaderError("tensor offsets out of place")


def _leap(p: _Parser, header: GGUFHeader, key: str, n: int, first: int, n_fields: int,
          n_tensors: int) -> GGUFHeader | None:
    """Jump over the string array ``key`` of ``n`` elements (a vocabulary, merges) without
    stepping through it; the header after it, or None (the caller then steps).

    Stepping costs ~70 ns a string in Python, 20 ms for Qwen's 300,000 tokens and merges, a
    second for 50 models. What follows the array starts with a known name: a key's namespace
    (``tokenizer.`` first, as the array's own, then ``general.``, the architecture's...) or,
    after the last field, a tensor's (``token_embd.``, ``blk.``...). ``bytes.find`` (C speed)
    gives candidate ends, and a candidate is taken only if everything after it parses as a
    writer writes it: exactly the remaining fields, keys ASCII and unique, then a tensor table
    (``_check_tensor_table``) whose data lies inside the file. Text inside an array can look
    like a key, but then the fields and the tensor entries after it would have to line up too.
    No candidate within ``LEAP_CANDIDATES`` and a few times the array's likely length: None, and
    the array is stepped through, so a file laid out some other way reads as before, slower."""
    s = p.s
    start = s.pos
    if start + 8 * n > s.size:  # every string has at least its 8-byte length
        raise HeaderError("a string array runs past the end of the file")
    likely = _likely_length(p, n)
    # The array's first strings are its shortest in the vocabularies seen (bytes, then longer
    # merges), so it ends past half their average a string: the search starts there. A guess
    # that misses only costs the stepping this avoids.
    lo = start + 8 * n + likely // 2
    hi = min(s.size, lo + max(4 * likely, 16 * n) + CHUNK)
    s.pos = start
    if first < n_fields:
        own = key.split(".", 1)[0]
        others = {k.split(".", 1)[0] for k in header.fields} | set(NAMESPACES)
        arch = header.fields.get("general.architecture")
        if isinstance(arch, str):
            others.add(arch)
        tiers = [[own], sorted(others - {own, ""})]
    else:
        tiers = [list(TENSOR_NAMES)]
    tried, saved = 0, p.max_string
    p.max_string = LEAP_STRING
    try:
        for tier in tiers:
            needles = [f"{name}.".encode() if first < n_fields else name.encode() for name in tier]
            for cand in _candidates(s, p.u64, lo, hi, needles):
                tried += 1
                if tried > LEAP_CANDIDATES:
                    break
                rest = GGUFHeader(header.version, dict(header.fields), file_size=s.size)
                s.pos = cand
                try:
                    _body(p, rest, first, n_fields, n_tensors, leap=True, strict=True)
                except HeaderError:
                    continue
                for k in header.fields:
                    del rest.fields[k]
                return rest
    finally:
        p.max_string = saved
    s.pos = start
    return None


def _likely_length(p: _Parser, n: int) -> int:
    """The bytes the strings of an ``n``-string array after its length fields probably take,
    from its first strings (stepped through; the stream is left wherever)."""
    s, sample = p.s, min(n, 256)
    begin = s.pos
    p.skip_items(STRING, sample)
    return (s.pos - begin - 8 * sample) * n // max(1, sample)


def _candidates(s: _Stream, u64: struct.Struct, lo: int, hi: int, needles: list[bytes]):
    """Offsets in ``[lo, hi)`` where a name starting with one of ``needles`` could begin (its
    length field, 1-256, then the needle), chunk by chunk from ``lo``, ascending within a chunk.
    One buffer is read into again and again (its tail carried over, so a name across two chunks
    is found whole), so a guess near the array's end costs about what lies before it."""
    carry = 8 + max(map(len, needles))
    buf = bytearray(CHUNK + carry)
    view = memoryview(buf)
    nxt = {needle: lo + 8 for needle in needles}  # file offset from which each is looked for
    at, kept = lo, 0  # file offset of the next read; bytes carried at the buffer's start
    try:
        while at < hi:
            s.fh.seek(at)
            got = s.fh.readinto(view[kept:kept + min(CHUNK, hi - at)])
            if not got:
                return
            filled, base = kept + got, at - kept  # base: the file offset of buf[0]
            hits = []
            for needle in needles:
                i = buf.find(needle, max(8, nxt[needle] - base), filled)
                while i >= 0:
                    hits.append(i)
                    nxt[needle] = base + i + 1
                    i = buf.find(needle, i + 1, filled)
                nxt[needle] = max(nxt[needle], base + filled - len(needle) + 1)
            for i in sorted(hits):
                if 0 < u64.unpack_from(buf, i - 8)[0] <= 256:
                    yield base + i - 8
            at += got
            kept = min(carry, filled)
            view[:kept] = buf[filled - kept:filled]
    finally:
        view.release()
