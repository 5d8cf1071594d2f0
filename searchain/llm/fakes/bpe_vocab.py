"""A tiny byte-level BPE vocabulary in the GPT-2 convention, for the random-weight test model.

Every byte is its own token (so any text tokenises, and a GBNF grammar can always be followed
one byte at a time), a handful of merges of common English pairs keep the ``gpt2`` tokenizer of
llama.cpp happy (it refuses a BPE vocab without merges), and three ChatML control tokens make the
chat template work. Larger layouts pad the vocabulary with inert tokens to a real model's size,
because the output projection's cost grows with the vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..chat_templates import CHATML_TEMPLATE

# gguf token types (llama.cpp's llama_token_type)
TOKEN_NORMAL = 1
TOKEN_CONTROL = 3

BOS = "<|endoftext|>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"

# Common English pairs, written as byte-level strings ("Ġ" is the space byte).
MERGE_PAIRS = (
    ("Ġ", "t"), ("h", "e"), ("i", "n"), ("Ġ", "a"), ("e", "r"), ("o", "n"),
    ("Ġt", "he"), ("r", "e"), ("Ġ", "s"), ("a", "t"), ("e", "n"), ("o", "r"),
)

def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character map (what llama.cpp's BPE decoder expects)."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {b: chr(c) for b, c in zip(printable, chars)}


@dataclass(frozen=True)
class Vocab:
    tokens: list[str]
    token_types: list[int]
    merges: list[str]
    bos_id: int
    eos_id: int
    chat_template: str = CHATML_TEMPLATE


def build_vocab(pad_to: int | None = None) -> Vocab:
    """256 byte tokens (id == byte value), the merges' results, three ChatML specials, and
    inert padding tokens up to ``pad_to`` (never produced: no merge leads to them)."""
    byte_map = bytes_to_unicode()
    tokens = [byte_map[b] for b in range(256)]
    types = [TOKEN_NORMAL] * 256
    merges = []
    for left, right in MERGE_PAIRS:
        merges.append(f"{left} {right}")
        tokens.append(left + right)
        types.append(TOKEN_NORMAL)
    specials = (BOS, IM_START, IM_END)
    first_special = len(tokens)
    tokens.extend(specials)
    types.extend([TOKEN_CONTROL] * len(specials))
    if pad_to is not None:
        if pad_to < len(tokens):
            raise ValueError(f"pad_to={pad_to} is smaller than the base vocabulary ({len(tokens)})")
        tokens.extend(f"[PAD{i}]" for i in range(pad_to - len(tokens)))
        types.extend([TOKEN_NORMAL] * (pad_to - len(types)))
    return Vocab(tokens, types, merges, bos_id=first_special, eos_id=first_special + 2)
