"""Prompt-lookup speculative decoding (llm/llama/speculation.py, issue #37): drafts copied from the
context, checked in one batch, give plain greedy decoding's tokens (exactly, on the tiny model;
a real model's batched logits can round differently, see speculation.py)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from searchain.llm.base import GenerationParams
from searchain.llm.llama.speculation import lookup_draft

COPY_ME = [{"role": "user", "content": "Copy this: the quick brown fox jumps over the lazy dog. "
                                       "the quick brown fox jumps over the lazy dog."}]


def test_lookup_takes_the_latest_occurrence_of_the_longest_ngram():
    context = np.array([1, 2, 3, 9, 9, 5, 2, 3, 7, 8, 1, 2, 3], dtype=np.int32)
    # The tail (1, 2, 3) occurs at the start only; (2, 3) later too, but 3-grams come first.
    assert lookup_draft(context, 4) == [9, 9, 5, 2]
    assert lookup_draft(context, 2) == [9, 9]
    tail_two = np.array([4, 2, 3, 5, 6, 2, 3, 7, 2, 3], dtype=np.int32)
    assert lookup_draft(tail_two, 3) == [7, 2, 3]  # the most recent (2, 3) wins


def test_lookup_proposes_nothing_without_a_match_or_room():
    assert lookup_draft(np.array([1, 2, 3, 4, 5], dtype=np.int32), 4) == []
    assert lookup_draft(np.array([1, 2, 1, 2], dtype=np.int32), 0) == []
    assert lookup_draft(np.array([7], dtype=np.int32), 4) == []
    # One-token matches are not used (MIN_NGRAM 2): a lone repeated token proposes nothing.
    assert lookup_draft(np.array([5, 1, 6, 1], dtype=np.int32), 3) == []


@pytest.fixture(scope="module")
def two_models(tiny_llm_settings):
    from searchain.llm.llama.llama_cpp_backend import LlamaCppLLM

    plain = LlamaCppLLM(tiny_llm_settings)
    lookup = LlamaCppLLM(dataclasses.replace(tiny_llm_settings, prompt_lookup=8))
    yield plain, lookup
    plain.close()
    lookup.close()


@pytest.mark.parametrize("grammar", [None, 'root ::= [a-z ]+ "."'])
def test_prompt_lookup_gives_plain_greedy_tokens(two_models, grammar):
    plain, lookup = two_models
    assert (plain.prompt_lookup, lookup.prompt_lookup) == (0, 8)  # the setting reaches the backend
    params = GenerationParams(max_tokens=100, grammar=grammar, logprobs=True)
    runs = []
    for llm in (plain, lookup):
        llm.reset_cache()
        pieces: list[str] = []
        completion = llm.chat(COPY_ME, params, on_token=pieces.append)
        runs.append((llm.last_generated_tokens(), completion, "".join(pieces)))
    (tokens_a, a, streamed_a), (tokens_b, b, streamed_b) = runs
    assert tokens_a == tokens_b and a.text == b.text and streamed_a == streamed_b
    assert a.usage == b.usage and a.finish_reason == b.finish_reason
    assert np.allclose(a.token_logprobs, b.token_logprobs, atol=1e-3)
    # The mechanism really ran: drafts were proposed and most of them kept.
    assert plain.drafted == 0 and lookup.drafted > 0 and lookup.draft_accepted > 0


def test_a_later_call_reuses_the_cache_a_speculative_call_left(two_models):
    """Rejected drafts are dropped from the KV cache: the next round of a dialogue evaluates
    only its new tokens and writes what plain decoding writes."""
    plain, lookup = two_models
    outputs = []
    for llm in (plain, lookup):
        llm.reset_cache()
        first = llm.chat(COPY_ME, GenerationParams(max_tokens=40))
        follow = [*COPY_ME, {"role": "assistant", "content": first.text},
                  {"role": "user", "content": "again"}]
        second = llm.chat(follow, GenerationParams(max_tokens=40))
        outputs.append((first.text, second.text, second.usage))
    assert outputs[0] == outputs[1]
    usage = outputs[1][2]
    assert usage.prompt_tokens_evaluated < usage.prompt_tokens // 2


def test_no_drafting_when_sampling(two_models):
    _, lookup = two_models
    lookup.chat(COPY_ME, GenerationParams(max_tokens=30, temperature=0.8, seed=3))
    assert lookup.drafted == 0


def test_the_setting_is_range_checked():
    from searchain.config import Settings
    from searchain.errors import ConfigError
    from searchain.settings_schema import with_value

    assert with_value(Settings(), "llm.prompt_lookup", 10).llm.prompt_lookup == 10
    with pytest.raises(ConfigError):
        with_value(Settings(), "llm.prompt_lookup", -1)


def test_bench_lookup_reports_speed_and_identity(tmp_path, tiny_gguf):
    """`searchain bench lookup` on the tiny model: every draft size gives plain decoding's output."""
    import argparse
    import json

    from searchain.bench.decoding.lookup import run
    from searchain.config import Settings
    from searchain.errors import ConfigError

    text = "The Velmor Bridge was designed by Ruth Calloway in 1911. Ruth Calloway also built the viaduct."
    record = {"question_text": "Who designed the Velmor Bridge?",
              "contexts": [{"title": "Velmor Bridge", "paragraph_text": text, "is_supporting": True}]}
    dataset = tmp_path / "d.jsonl"
    dataset.write_text(json.dumps(record) + "\n", encoding="utf-8")
    settings = Settings()
    settings.llm = dataclasses.replace(settings.llm, n_ctx=2048, n_gpu_layers=0, n_batch=256)
    settings.llm = dataclasses.replace(settings.llm, max_tokens=60)
    args = argparse.Namespace(dataset=str(dataset), model=str(tiny_gguf), limit=1, drafts="0,4", threads=1,
                              draft_model=str(tiny_gguf))
    report = run(settings, args)
    assert report["identical_to_plain"] == {"final": True, "reader": True, "chain": True}
    assert set(report["calls"]["final"]) == {"0", "4", "draft-model"}
    assert report["calls"]["chain"]["draft-model"]["accepted"] > 0
    assert report["calls"]["final"]["0"]["drafted"] == 0
    with pytest.raises(ConfigError, match="start with 0"):
        run(settings, argparse.Namespace(**{**vars(args), "drafts": "4"}))
    with pytest.raises(ConfigError, match="does not exist"):
        run(settings, argparse.Namespace(**{**vars(args), "draft_model": str(tmp_path / "none.gguf")}))
