"""The GGUF header reader on truncated, flipped and forged files: facts or a ``ModelError``
with a hint, never a ``struct.error``, ``UnicodeDecodeError``, ``MemoryError`` or a hang.

The models folder lists every ``.gguf`` it finds, so a half-downloaded or damaged file reaches
this reader on every listing; an exception other than ``ModelError`` would break the listing.
"""

from __future__ import annotations

import struct
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from searchain.llm.models.gguf_header import read_header
from searchain.llm.models.gguf_info import read_model_facts
from tests.faults.common import mutated, only_project_errors

PROPERTY = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def gguf(tmp_path_factory):
    """A tiny random-weight model's bytes and where its header ends (the data section)."""
    from searchain.llm.fakes.testmodel import write_test_gguf

    path = write_test_gguf(tmp_path_factory.mktemp("gguf") / "tiny.gguf", quant=None)
    return path.read_bytes(), read_header(path).data_offset


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("gguf-cases")


def facts_of(root: Path, data: bytes):
    path = Path(tempfile.mkdtemp(dir=root)) / "m.gguf"
    path.write_bytes(data)
    return only_project_errors(lambda: read_model_facts(path))


@PROPERTY
@given(data=st.data())
def test_truncated_anywhere(scratch, gguf, data):
    sample, _ = gguf
    cut = data.draw(st.integers(0, len(sample) - 1))
    facts = facts_of(scratch, sample[:cut])
    # A cut file is never read as a whole model: its tensors need the bytes that are gone.
    assert not hasattr(facts, "architecture"), f"a file cut at {cut} of {len(sample)} read as valid"


@PROPERTY
@given(data=st.data())
def test_header_bytes_mutated(scratch, gguf, data):
    sample, header_end = gguf
    facts_of(scratch, data.draw(mutated(sample[:header_end])) + sample[header_end:])


# Forged headers: the magic and a version, then counts, lengths and types of any value.
u32, u64 = st.integers(0, 2**32 - 1), st.integers(0, 2**64 - 1)
small = st.integers(0, 40)
forged_field = st.tuples(small, st.binary(max_size=12), st.one_of(st.integers(0, 13), u32),
                         st.binary(max_size=24))


@PROPERTY
@given(st.sampled_from([2, 3, 1, 4, 2 << 24, 3 << 24]), st.one_of(small, u64), st.one_of(small, u64),
       st.lists(forged_field, max_size=5), st.binary(max_size=64))
@example(3, 0, 1, [(4, b"key\xff", 8, struct.pack("<Q", 2) + b"\xff\xfe")], b"")
def test_forged_headers(scratch, version, n_tensors, n_fields, fields, tail):
    body = b"".join(struct.pack("<Q", klen) + key + struct.pack("<I", vtype) + value
                    for klen, key, vtype, value in fields)
    facts_of(scratch, b"GGUF" + struct.pack("<IQQ", version, n_tensors, n_fields) + body + tail)
