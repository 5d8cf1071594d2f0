"""The random-weight test GGUF: written fast, readable as GGUF, loadable by real llama.cpp."""

import gguf
import pytest

from searchain.errors import ModelError
from searchain.llm.fakes.bpe_vocab import build_vocab, bytes_to_unicode
from searchain.llm.fakes.testmodel import LAYOUTS, write_test_gguf
from searchain.llm.models.gguf_info import read_model_facts


def test_byte_map_is_a_bijection_over_all_bytes():
    mapping = bytes_to_unicode()
    assert sorted(mapping) == list(range(256))
    assert len(set(mapping.values())) == 256


def test_vocab_has_every_byte_and_chatml_specials():
    vocab = build_vocab()
    assert 256 < len(vocab.tokens) < 300
    assert len(set(vocab.tokens)) == len(vocab.tokens)
    assert vocab.tokens[vocab.eos_id] == "<|im_end|>"
    padded = build_vocab(pad_to=1000)
    assert len(padded.tokens) == 1000 and len(set(padded.tokens)) == 1000


def test_tiny_gguf_metadata(tiny_gguf):
    facts = read_model_facts(tiny_gguf)
    assert facts.architecture == "llama"
    assert facts.n_layers == 2
    assert facts.vocab_size == len(build_vocab().tokens)
    assert facts.quantisation == "F32"
    assert "<|im_start|>" in facts.chat_template
    reader = gguf.GGUFReader(str(tiny_gguf))
    names = {t.name for t in reader.tensors}
    assert {"token_embd.weight", "output.weight", "blk.1.ffn_down.weight"} <= names


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path):
    a = write_test_gguf(tmp_path / "a.gguf", seed=1).read_bytes()
    b = write_test_gguf(tmp_path / "b.gguf", seed=1).read_bytes()
    c = write_test_gguf(tmp_path / "c.gguf", seed=2).read_bytes()
    assert a == b
    assert a != c


def test_tiny_quantised_with_llama_cpp_quantiser(tmp_path):
    path = write_test_gguf(tmp_path / "q.gguf", quant="Q8_0")
    facts = read_model_facts(path)
    assert facts.quantisation == "Q8_0"
    assert facts.file_size < read_model_facts(write_test_gguf(tmp_path / "f.gguf")).file_size
    assert not list(tmp_path.glob(".*tmp"))  # the unquantised temp file is gone


def test_unknown_layout_and_quant_are_clear_errors(tmp_path):
    with pytest.raises(ModelError, match="layout"):
        write_test_gguf(tmp_path / "x.gguf", layout="llama-70b")
    with pytest.raises(ModelError, match="quantisation"):
        write_test_gguf(tmp_path / "x.gguf", quant="Q9_X")


def test_real_layouts_have_real_shapes():
    one_b, eight_b = LAYOUTS["llama-1b"], LAYOUTS["llama-8b"]
    assert (one_b.n_embd, one_b.n_layer, one_b.n_ff, one_b.vocab_size) == (2048, 16, 8192, 128256)
    assert (eight_b.n_embd, eight_b.n_layer, eight_b.n_ff) == (4096, 32, 14336)


def _parameters(layout) -> int:
    head_dim = layout.n_embd // layout.n_head
    kv = head_dim * layout.n_head_kv
    per_layer = 2 * layout.n_embd ** 2 + 2 * kv * layout.n_embd + 3 * layout.n_embd * layout.n_ff
    embeddings = layout.vocab_size * layout.n_embd * (1 if layout.tied_embeddings else 2)
    return layout.n_layer * per_layer + embeddings


def test_qwen_layouts_have_the_published_parameter_counts():
    # Qwen2.5-1.5B: 1.54 B parameters, 0.5B: 0.49 B (their model cards; QKV biases aside)
    assert _parameters(LAYOUTS["qwen2.5-1.5b"]) / 1e9 == pytest.approx(1.54, abs=0.01)
    assert _parameters(LAYOUTS["qwen2.5-0.5b"]) / 1e9 == pytest.approx(0.49, abs=0.01)
    assert LAYOUTS["qwen2.5-1.5b"].vocab_size == LAYOUTS["qwen2.5-0.5b"].vocab_size == 151936


def test_make_test_model_offers_tiny_and_every_real_shape():
    import argparse

    from searchain.cli import models

    parser = argparse.ArgumentParser()
    models.register(parser.add_subparsers())
    sub = next(a for a in parser._subparsers._group_actions[0].choices["models"]._subparsers._group_actions
               if hasattr(a, "choices")).choices["make-test-model"]
    layout = next(a for a in sub._actions if a.dest == "layout")
    real = {name for name, spec in LAYOUTS.items() if spec.default_quant}  # not the test-only shapes
    assert set(layout.choices) == {"tiny"} | real
