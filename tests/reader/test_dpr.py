"""The DPR span reader over a tiny random DPRReader: spans stay inside the passage, in bounds."""

import shutil

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchain.errors import ModelError
from searchain.reader.base import Reader, ReaderResult
from searchain.reader.dpr import (
    DEFAULT_DPR_READER,
    DPRSpanReader,
    best_span,
    download_dpr_reader,
    is_dpr_reader_dir,
    reader_dir,
)

PASSAGE = "Stanley is a city in Mountrail County, North Dakota. It was founded in 1902 by settlers."

_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=300
)
_wordy = st.lists(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789,.'-()éü漢", min_size=1, max_size=22),
    min_size=0, max_size=80,
).map(" ".join)


def _check_span(reader, result: ReaderResult, passage: str):
    assert 0 <= result.start <= result.end <= len(passage)
    assert result.answer == passage[result.start : result.end]
    assert result.threshold == reader.threshold
    if result.answer:
        pieces = reader._tokenizer(result.answer, add_special_tokens=False)["input_ids"]
        assert 1 <= len(pieces) <= reader.max_answer_tokens


@pytest.mark.slow
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(question=_text, title=_text, passage=st.one_of(_text, _wordy))
def test_spans_are_passage_slices_within_bounds(tiny_dpr_reader, question, title, passage):
    result = tiny_dpr_reader.read(question, title, passage)
    _check_span(tiny_dpr_reader, result, passage)
    if passage.strip():
        # A passage with any token gets a span (the question alone can never be the answer).
        assert result.answer.strip() or not tiny_dpr_reader._tokenizer(passage, add_special_tokens=False)["input_ids"]


def test_is_a_reader_with_relevance_as_confidence(tiny_dpr_reader):
    assert isinstance(tiny_dpr_reader, Reader)
    result = tiny_dpr_reader.read("When was Stanley founded?", "Stanley", PASSAGE)
    assert result.answer and result.answer in PASSAGE
    assert isinstance(result.confidence, float) and result.threshold == 1.5


def test_read_many_matches_single_reads_in_input_order(tiny_dpr_reader):
    passages = [("Stanley", PASSAGE), ("Short", "one two"), ("Empty", ""), ("Long", "word " * 120),
                ("Again", PASSAGE[:40])]
    batched = tiny_dpr_reader.read_many("Who founded Stanley?", passages)
    single = [tiny_dpr_reader.read("Who founded Stanley?", t, x) for t, x in passages]
    assert len(batched) == len(passages)
    for b, s in zip(batched, single):
        # padding in a batch must not change the span or (beyond float noise) the relevance
        assert (b.answer, b.start, b.end) == (s.answer, s.start, s.end)
        assert b.confidence == pytest.approx(s.confidence, abs=1e-4)
    assert batched[2] == ReaderResult("", 0, 0, batched[2].confidence, 1.5)


def test_passage_longer_than_the_model_input_is_cut_not_crashed(tiny_dpr_reader):
    passage = " ".join(f"w{i}" for i in range(2000))
    result = tiny_dpr_reader.read("q", "t", passage)
    _check_span(tiny_dpr_reader, result, passage)
    assert result.end <= len(passage)


def test_best_span_respects_bounds_and_word_boundaries():
    start = torch.tensor([0.0, 5.0, 0.0, 9.0, 0.0])
    end = torch.tensor([9.0, 0.0, 0.0, 0.0, 1.0])
    # the unconstrained argmaxes would give start 3 > end 0: decoding must not
    i, j = best_span(start, end, [True] * 5, [True] * 5, max_tokens=16)
    assert (i, j) == (3, 4)
    # token 3 cannot start a word (a "##" piece): best left is start 1, end within 2 tokens
    start, end = torch.tensor([0.0, 5.0, 0.0, 9.0, 0.0]), torch.tensor([1.0, 0.0, 0.5, 0.0, 3.0])
    assert best_span(start, end, [True] * 5, [True] * 5, max_tokens=2) == (3, 4)
    assert best_span(start, end, [True, True, True, False, True], [True] * 5, max_tokens=2) == (1, 2)
    assert best_span(torch.tensor([]), torch.tensor([]), [], [], max_tokens=3) is None


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 40), max_tokens=st.integers(1, 10), seed=st.integers(0, 2**16),
       starts=st.lists(st.booleans(), min_size=40, max_size=40),
       ends=st.lists(st.booleans(), min_size=40, max_size=40))
def test_best_span_property(n, max_tokens, seed, starts, ends):
    g = torch.Generator().manual_seed(seed)
    s_logits, e_logits = torch.randn(n, generator=g), torch.randn(n, generator=g)
    can_start, can_end = starts[:n], ends[:n]
    i, j = best_span(s_logits, e_logits, can_start, can_end, max_tokens)
    assert 0 <= i <= j < n and j - i < max_tokens
    legal = [(a, b) for a in range(n) for b in range(a, min(n, a + max_tokens)) if can_start[a] and can_end[b]]
    if legal:
        assert can_start[i] and can_end[j]
        best = max(float(s_logits[a] + e_logits[b]) for a, b in legal)
        assert float(s_logits[i] + e_logits[j]) == pytest.approx(best)


def test_missing_or_broken_reader_gives_model_error(tmp_path, tiny_dpr_reader_dir):
    with pytest.raises(ModelError, match="No DPR reader found"):
        DPRSpanReader(tmp_path / "nothing-here")
    broken = tmp_path / "broken"
    shutil.copytree(tiny_dpr_reader_dir, broken)
    (broken / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(ModelError, match="Cannot load the DPR reader"):
        DPRSpanReader(broken)


def test_name_resolves_under_models_dir(home, tiny_dpr_reader_dir):
    target = reader_dir(home, "someone/tiny-reader")
    shutil.copytree(tiny_dpr_reader_dir, target)
    reader = DPRSpanReader("someone/tiny-reader", models_dir=home.models_dir, threshold=0.7)
    assert reader.path == target and reader.threshold == 0.7


def test_download_offline_is_a_clear_model_error(home):
    with pytest.raises(ModelError) as info:
        download_dpr_reader(home)
    assert DEFAULT_DPR_READER in str(info.value) and "HF_HUB_OFFLINE" in str(info.value)
    assert not is_dpr_reader_dir(reader_dir(home))


def test_download_is_a_no_op_when_installed(home, tiny_dpr_reader_dir):
    shutil.copytree(tiny_dpr_reader_dir, reader_dir(home))
    assert download_dpr_reader(home) == reader_dir(home)


def test_tiny_reader_tokenizer_keeps_its_vocabulary(tiny_dpr_reader_dir):
    from transformers import BertTokenizerFast

    tokenizer = BertTokenizerFast.from_pretrained(str(tiny_dpr_reader_dir))
    assert tokenizer.tokenize("Capital Paris") == ["capital", "p", "##a", "##r", "##i", "##s"]


def test_download_through_the_real_hub_client(home, tiny_dpr_reader_dir, online):
    from tests.llm.hf_stub import FolderHubStub

    with FolderHubStub.of_folders({DEFAULT_DPR_READER: tiny_dpr_reader_dir}) as hub:
        path = download_dpr_reader(home, endpoint=hub.url)
    assert path == reader_dir(home) and is_dpr_reader_dir(path)
    assert DPRSpanReader(path).read("capital", "Paris", "Paris is the capital.").answer
