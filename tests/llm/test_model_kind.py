"""Base models / GGUFs without a chat template, and special tokens in outputs (issue #23 item 5).

Gemma 3 270M (base) has no chat template; under the old ChatML fallback it wrote <|im_start|>
runs and left <|im_end|> in answers, and as the reader it answered "<|im_end|>". The outputs
below are shaped like those traces.
"""

from pathlib import Path
from types import SimpleNamespace

import pytest

from searchain.llm.base import GenerationParams
from searchain.llm.events import LLMWarning
from searchain.llm.model_kind import CompletionPromptBuilder, prompt_style, strip_special_tokens
from searchain.reasoning.chain.parser import parse_chain


@pytest.mark.parametrize("raw, clean", [
    ("<|im_end|>", ""),
    ("Peter Schmeichel<|im_end|>\n<|im_start|>user\nAnd who is his son?", "Peter Schmeichel"),
    ("<|im_start|>assistant\n[Query 1]: Who wrote it?<|im_end|>", "[Query 1]: Who wrote it?"),
    ("<|im_start|><|im_start|><|im_start|><|im_start|>", ""),
    ("Paris<end_of_turn>\n<start_of_turn>user\nmore", "Paris"),
    ("<start_of_turn>model\nParis<eos>", "Paris"),
    ("<s> Toronto</s>", "Toronto"),
    ("[INST] Toronto [/INST]", "Toronto"),
    ("Born in 1902 <|eot_id|><|start_header_id|>user<|end_header_id|>", "Born in 1902"),
])
def test_special_tokens_are_stripped_and_end_the_text(raw, clean):
    assert strip_special_tokens(raw) == clean


def test_text_without_special_tokens_is_left_exactly_as_written():
    text = "[Query 1]: Is 3 < 4?\n[Answer 1]: Yes, 3 < 4 [1].\n"
    assert strip_special_tokens(text) is text or strip_special_tokens(text) == text


def test_parser_never_sees_leaked_template_tokens():
    chain = parse_chain("[Query 1]: Who wrote The Lantern Suite?\n[Answer 1]: Ansel Ruddock<|im_end|>\n"
                        "<|im_start|>user\n[Query 1]: Ignored?\n[Answer 1]: x")
    assert [(s.query, s.answer) for s in chain.steps] == [("Who wrote The Lantern Suite?", "Ansel Ruddock")]


def _facts(template, name, stem):
    return SimpleNamespace(chat_template=template, name=name, path=Path(f"/m/{stem}.gguf"))


def test_prompt_style_from_the_file_header():
    assert prompt_style(_facts("{{ messages }}", "SmolLM2 135M Instruct", "smollm2")).kind == "chat"
    gemma = prompt_style(_facts(None, "Gemma 3 270m", "gemma-3-270m-q4_k_m"))
    assert gemma.completion and "base" in gemma.reason and "no chat template" in gemma.reason
    instruct = prompt_style(_facts(None, "SmolLM2 135M Instruct", "smollm2-135m-instruct"))
    assert instruct.completion and "base" not in instruct.reason


def test_completion_prompts_carry_no_role_markers_and_end_on_the_cue():
    builder = CompletionPromptBuilder()
    prompt = builder.render([{"role": "system", "content": "You read one passage."},
                             {"role": "user", "content": "Passage: X.\n\nQuestion: q?\nAnswer span:"}])
    assert prompt == "You read one passage.\n\nPassage: X.\n\nQuestion: q?\nAnswer span:"
    rounds = builder.render([{"role": "user", "content": "[Question]: q?"},
                             {"role": "assistant", "content": "[Query 1]: a?"},
                             {"role": "user", "content": "According to the reference..."}])
    assert rounds == "[Question]: q?\n\n[Query 1]: a?\n\nAccording to the reference...\n"
    assert "<|" not in prompt + rounds


def test_a_gguf_without_template_gets_plain_prompts_a_visible_warning_and_clean_output(
        tmp_path, tiny_llm_settings):
    from searchain.llm.llama.llama_cpp_backend import LlamaCppLLM
    from searchain.llm.fakes.testmodel import write_test_gguf

    events = []
    llm = LlamaCppLLM(tiny_llm_settings, write_test_gguf(tmp_path / "base.gguf", chat_template=None),
                      on_event=events.append)
    try:
        assert llm.prompt_style.completion
        warnings = [e for e in events if isinstance(e, LLMWarning)]
        assert warnings and "no chat template" in warnings[0].message and warnings[0].hint
        assert llm.warnings == warnings
        assert llm.render_chat([{"role": "user", "content": "hi"}]) == "hi\n"
        # The model is forced (by a grammar) to write what Gemma wrote: an answer, then a
        # template's end-of-turn and a new turn. Generation stops there; none of it is returned.
        leak = 'root ::= "Peter Schmeichel<|im_end|>\\n<|im_start|>user\\nmore text"\n'
        streamed = []
        c = llm.chat([{"role": "user", "content": "Who?"}], GenerationParams(max_tokens=60, grammar=leak),
                     on_token=streamed.append)
        assert c.text == "Peter Schmeichel" and "".join(streamed) == "Peter Schmeichel"
        assert c.finish_reason == "stop" and c.usage.completion_tokens < 30
    finally:
        llm.close()
