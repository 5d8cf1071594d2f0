"""What the fault suite's property tests share: the one rule they check, and byte mutations.

The rule: a parser of untrusted input either returns, or raises one of the project's own
errors (``SearchainError``) carrying a hint the user can act on. Anything else (``KeyError``,
``struct.error``, ``UnicodeDecodeError``, ...) reaches the user as a traceback, so it fails the
property, and hypothesis shrinks it to the smallest input that shows it.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from hypothesis import strategies as st

from searchain.errors import SearchainError

T = TypeVar("T")


def only_project_errors(call: Callable[[], T]) -> T | SearchainError:
    """``call()``'s value, or the ``SearchainError`` it raised (after checking its hint)."""
    try:
        return call()
    except SearchainError as err:
        assert err.hint, f"{type(err).__name__} without a hint: {err}"
        return err


# Text as users' files hold it, including the awkward parts: NULs, lone surrogates are left
# out (they cannot be encoded), but control characters, tabs, quotes and markup stay in.
any_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                         any_text)
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(any_text, inner, max_size=4)), max_leaves=12)


@st.composite
def mutated(draw, sample: bytes, max_edits: int = 6) -> bytes:
    """``sample`` with a few edits: byte flips, deletions, insertions, then maybe a truncation.

    Edits near a valid file find the parser's deep paths (a length field off by one, a tag cut
    in half), which wholly random bytes rarely reach past the first check.
    """
    data = bytearray(sample)
    for _ in range(draw(st.integers(0, max_edits))):
        kind = draw(st.sampled_from(["flip", "delete", "insert"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "flip" and data:
            data[at] ^= draw(st.integers(1, 255))
        elif kind == "delete" and data:
            del data[at:at + draw(st.integers(1, 16))]
        else:
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
    if draw(st.booleans()):
        data = data[:draw(st.integers(0, len(data)))]
    return bytes(data)
