"""The header reader's leap over long string arrays (vocabularies, merges): the same header as
stepping through every string, on the real starter model, on headers laid out as llama.cpp's
converter writes them and in other orders, and on vocabularies whose tokens look like keys or
tensor names; a layout it cannot check falls back to stepping."""

import gguf
import numpy as np
import pytest

from searchain.llm.chat_templates import CHATML_TEMPLATE
from searchain.llm.fakes.sparse_gguf import write_sparse_gguf
from searchain.llm.models import gguf_header
from searchain.llm.models.gguf_header import read_header
from tests.reasoning.test_real_starter_model import STARTER


def _same(path):
    walked, leapt = read_header(path, leap=False), read_header(path)
    assert list(leapt.fields.items()) == list(walked.fields.items())
    assert leapt.tensors == walked.tensors and leapt.data_offset == walked.data_offset
    return leapt


@pytest.fixture
def stepped(monkeypatch):
    """How many strings were stepped through, one entry per long array stepped."""
    counts = []
    original = gguf_header._Parser._skip_strings

    def spy(self, n):
        counts.append(n)
        return original(self, n)

    monkeypatch.setattr(gguf_header._Parser, "_skip_strings", spy)
    return counts


def _write(path, tokens, *, order="converter", extra=None, endian=gguf.GGUFEndian.LITTLE):
    w = gguf.GGUFWriter(str(path), "qwen2", endianess=endian)
    w.add_name("leap test")
    w.add_context_length(4096)
    if order != "converter":
        w.add_chat_template(CHATML_TEMPLATE)
    w.add_tokenizer_model("gpt2")
    w.add_token_list(tokens)
    if extra:
        w.add_string(extra, "right after the tokens")
    w.add_token_types([1] * len(tokens))
    w.add_token_merges([f"{t} x" for t in tokens])
    if order == "converter":
        w.add_eos_token_id(1)
        w.add_chat_template(CHATML_TEMPLATE)
    for i in range(3):
        w.add_tensor(f"blk.{i}.attn_q.weight", np.ones((4, 32), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.mark.skipif(STARTER is None, reason="the starter model package is not installed")
def test_the_real_starter_model_reads_the_same_leapt(stepped):
    header = _same(STARTER)
    assert header.fields["tokenizer.ggml.tokens"].count == 49152
    assert header.fields["tokenizer.chat_template"].startswith("{% for message in messages %}")
    assert len(header.tensors) == 272
    stepped.clear()
    read_header(STARTER)
    assert sum(stepped) <= 2 * 256  # only the samples: neither array was stepped through


@pytest.mark.parametrize("endian", [gguf.GGUFEndian.LITTLE, gguf.GGUFEndian.BIG])
@pytest.mark.parametrize("order", ["converter", "template first, merges last"])
def test_layouts_read_the_same_leapt(tmp_path, stepped, order, endian):
    tokens = [f"w{i}" for i in range(6000)]
    path = _write(tmp_path / "m.gguf", tokens, order=order, endian=endian)
    header = _same(path)
    assert header.fields["tokenizer.ggml.merges"].count == 6000
    stepped.clear()
    read_header(path)
    assert sum(stepped) <= 2 * 256


def test_tokens_that_look_like_keys_and_tensor_names(tmp_path):
    decoys = ["tokenizer.ggml.token_type", "tokenizer.ggml.merges", "general.name", "qwen2.",
              "blk.0.attn_q.weight", "tokenizer.", "blk.", "general.architecture"]
    tokens = [f"w{i}" for i in range(6000)]
    for i, decoy in enumerate(decoys * 4):  # near the start, the middle and the end
        tokens[(i * 797) % 6000] = decoy
    tokens[-3:] = decoys[:3]
    for order in ("converter", "template first, merges last"):
        _same(_write(tmp_path / f"{order[:4]}.gguf", tokens, order=order))


def test_a_key_of_an_unknown_namespace_falls_back_to_stepping(tmp_path, stepped):
    path = _write(tmp_path / "odd.gguf", [f"w{i}" for i in range(6000)], extra="zz-vendor.note")
    _same(path)
    stepped.clear()
    read_header(path)
    assert 6000 in stepped  # the tokens: no key after them starts with a known name


def test_the_discovery_fake_is_laid_out_as_real_files_are(tmp_path, stepped):
    path = write_sparse_gguf(tmp_path / "big.gguf", 9 * 10 ** 9, vocab_size=20_000)
    keys = list(_same(path).fields)
    assert keys.index("tokenizer.chat_template") > keys.index("tokenizer.ggml.merges")
    stepped.clear()
    read_header(path)
    assert sum(stepped) <= 2 * 256
