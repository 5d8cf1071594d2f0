"""A draft model of the same family speeds greedy decoding without changing it; one whose
vocabulary differs is refused with a clear warning and decoding goes on without it (#37)."""

from __future__ import annotations

import dataclasses

import pytest

from searchain.llm.base import GenerationParams

COPY_ME = [{"role": "user", "content": "Copy this: the quick brown fox jumps over the lazy dog."}]


@pytest.fixture(scope="module")
def other_tiny(tmp_path_factory):
    from searchain.llm.fakes.testmodel import write_test_gguf

    folder = tmp_path_factory.mktemp("draft")
    return (write_test_gguf(folder / "same-vocab.gguf", layout="tiny", seed=1),
            write_test_gguf(folder / "other-vocab.gguf", layout="tiny-512-vocab", seed=2))


def _generate(llm, grammar=None):
    llm.reset_cache()
    completion = llm.chat(COPY_ME, GenerationParams(max_tokens=60, grammar=grammar, logprobs=True))
    return llm.last_generated_tokens(), completion


@pytest.mark.parametrize("grammar", [None, 'root ::= [a-z ]+ "."'])
def test_a_draft_model_of_the_same_vocabulary_keeps_greedy_output(tiny_llm_settings, other_tiny, grammar):
    from searchain.llm.llama.llama_cpp_backend import LlamaCppLLM

    plain = LlamaCppLLM(tiny_llm_settings)
    # The main model drafting for itself: every draft token is its own choice.
    itself = LlamaCppLLM(dataclasses.replace(tiny_llm_settings, draft_model=tiny_llm_settings.model_path))
    other = LlamaCppLLM(dataclasses.replace(tiny_llm_settings, draft_model=str(other_tiny[0])))
    try:
        assert itself.draft_model is not None and other.draft_model is not None
        assert not itself.warnings and not other.warnings
        tokens, base = _generate(plain, grammar)
        for llm in (itself, other):
            got, completion = _generate(llm, grammar)
            assert got == tokens and completion.text == base.text and completion.usage == base.usage
            assert llm.drafted > 0
        assert itself.draft_accepted > 0  # and its drafts were kept
    finally:
        for llm in (plain, itself, other):
            llm.close()


def test_a_draft_model_with_another_vocabulary_is_refused_and_decoding_goes_on(tiny_llm_settings, other_tiny):
    from searchain.llm.llama.llama_cpp_backend import LlamaCppLLM

    events = []
    plain = LlamaCppLLM(tiny_llm_settings)
    llm = LlamaCppLLM(dataclasses.replace(tiny_llm_settings, draft_model=str(other_tiny[1])), on_event=events.append)
    try:
        assert llm.draft_model is None
        assert len(llm.warnings) == 1 and events == llm.warnings
        warning = llm.warnings[0]
        assert "does not share the model's vocabulary" in warning.message
        assert "512 tokens where the model has 271" in warning.message
        assert "llm.draft_model" in warning.hint
        tokens, base = _generate(plain)
        got, completion = _generate(llm)  # plain decoding, same output
        assert got == tokens and llm.drafted == 0
    finally:
        plain.close()
        llm.close()


def test_a_missing_or_broken_draft_file_is_refused_with_its_reason(tiny_llm_settings, tmp_path):
    from searchain.llm.llama.llama_cpp_backend import LlamaCppLLM

    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\0" * 64)
    for path, reason in ((tmp_path / "none.gguf", "does not exist"), (broken, "could not be loaded")):
        llm = LlamaCppLLM(dataclasses.replace(tiny_llm_settings, draft_model=str(path)))
        try:
            assert llm.draft_model is None and reason in llm.warnings[0].message
            assert llm.chat(COPY_ME, GenerationParams(max_tokens=5)).usage.completion_tokens == 5
        finally:
            llm.close()
