"""The streamed GGUF header reader: the same facts as the ``gguf`` package's full reader, a few
megabytes read from a file of gigabytes, and damaged headers refused without reading or
allocating what their lengths claim."""

import io

import gguf
import numpy as np
import pytest

from searchain.errors import ModelError
from searchain.llm.chat_templates import LLAMA3
from searchain.llm.fakes.sparse_gguf import write_sparse_gguf
from searchain.llm.models import gguf_header
from searchain.llm.models.gguf_header import ArrayInfo, read_header
from searchain.llm.models.gguf_info import read_model_facts, template_family


def _reference(path) -> dict:
    """Scalars and array lengths as gguf.GGUFReader decodes them."""
    reader = gguf.GGUFReader(str(path))
    out = {}
    for name, f in reader.fields.items():
        if name.startswith("GGUF."):  # the reader's own entries (version, counts), not metadata
            continue
        if f.types and f.types[0] == gguf.GGUFValueType.ARRAY:
            out[name] = len(f.data)
        else:
            out[name] = f.contents()
    return out, [(t.name, tuple(int(x) for x in t.shape), int(t.tensor_type), int(t.data_offset))
                 for t in reader.tensors]


@pytest.mark.parametrize("endian", [gguf.GGUFEndian.LITTLE, gguf.GGUFEndian.BIG])
def test_same_fields_and_tensors_as_the_gguf_package(tmp_path, endian):
    path = tmp_path / "m.gguf"
    w = gguf.GGUFWriter(str(path), "llama", endianess=endian)
    w.add_context_length(32768)
    w.add_block_count(2)
    w.add_head_count([8, 8])  # a per-layer array: decoded, it is short
    w.add_chat_template(LLAMA3)
    w.add_token_list([f"t{i}" for i in range(6000)])  # longer than SMALL_ARRAY: skipped
    w.add_token_scores([0.5] * 6000)
    w.add_bool("custom.flag", True)
    w.add_float64("custom.ratio", 0.25)
    w.add_tensor("a.weight", np.ones((3, 64), dtype=np.float32))
    w.add_tensor("b.weight", np.ones((32,), dtype=np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    fields, tensors = _reference(path)
    header = read_header(path)
    assert set(header.fields) == set(fields)
    for name, expected in fields.items():
        got = header.fields[name]
        got = got.count if isinstance(got, ArrayInfo) else len(got) if isinstance(got, list) else got
        assert got == (expected if not isinstance(expected, list) else len(expected)), name
    assert header.fields["llama.attention.head_count"] == [8, 8]
    assert [(t.name, t.shape, t.ggml_type, header.data_offset + t.offset)
            for t in header.tensors] == tensors
    facts = read_model_facts(path)
    assert (facts.vocab_size, facts.context_length, facts.head_count) == (6000, 32768, 8)
    assert facts.parameters == 3 * 64 + 32 and facts.template_family == "llama3"


def test_a_header_of_a_big_file_reads_megabytes_not_gigabytes(tmp_path, monkeypatch):
    path = write_sparse_gguf(tmp_path / "big.gguf", 12 * 10 ** 9, vocab_size=20_000)
    read = []

    class Counting(io.FileIO):
        def read(self, n=-1):
            data = super().read(n)
            read.append(len(data))
            return data

    monkeypatch.setattr(gguf_header, "open", lambda p, mode: Counting(p, "r"), raising=False)
    facts = read_model_facts(path)
    assert facts.file_size == 12 * 10 ** 9 and facts.vocab_size == 20_000
    assert facts.quantisation == "Q4_K_M"
    assert 0 < sum(read) < 8 * 2 ** 20


def _header_with(tmp_path, tail: bytes):
    """A GGUF header (version 3, no tensors, one field) whose field is ``tail``."""
    path = tmp_path / "bad.gguf"
    path.write_bytes(b"GGUF" + (3).to_bytes(4, "little") + (0).to_bytes(8, "little")
                     + (1).to_bytes(8, "little") + tail + b"\0" * 64)
    return path


def test_impossible_lengths_are_refused_without_reading_them(tmp_path):
    key = (4).to_bytes(8, "little") + b"name"
    huge_string = key + (8).to_bytes(4, "little") + (2 ** 62).to_bytes(8, "little")
    with pytest.raises(ModelError, match="damaged or truncated.*string of"):
        read_model_facts(_header_with(tmp_path, huge_string))
    huge_array = key + (9).to_bytes(4, "little") + (8).to_bytes(4, "little") + (2 ** 40).to_bytes(8, "little")
    with pytest.raises(ModelError, match="damaged or truncated.*impossible array length"):
        read_model_facts(_header_with(tmp_path, huge_array))
    odd_type = key + (77).to_bytes(4, "little")
    with pytest.raises(ModelError, match="unknown metadata type 77"):
        read_model_facts(_header_with(tmp_path, odd_type))


def test_a_vocabulary_cut_short_is_a_clear_error(tmp_path):
    whole = write_sparse_gguf(tmp_path / "whole.gguf", 0, vocab_size=30_000).read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(whole[: len(whole) // 3])  # inside the token list
    with pytest.raises(ModelError, match="damaged or truncated") as info:
        read_model_facts(cut)
    assert str(cut) in info.value.message


def test_template_families():
    from searchain.llm.chat_templates import TEMPLATES

    families = {name: template_family(text) for name, text in TEMPLATES.items()}
    assert families == {"chatml": "chatml", "qwen2.5": "qwen2.5", "qwen3": "qwen3",
                        "qwen3-instruct": "chatml", "llama3": "llama3", "phi3": "phi3",
                        "mistral": "mistral"}
    assert template_family(None) == "none" and template_family("{{ prompt }}") == "other"
    assert template_family("<start_of_turn>user") == "gemma"
