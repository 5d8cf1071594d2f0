"""A folder of the user's own prompt templates (``reasoning.prompts_folder``): a ``NAME.txt`` there
replaces the built-in template of that name; the others stay built-in; a bad folder or template
is refused with the path in the message."""

import pytest

from searchain.config import ReasoningSettings
from searchain.errors import ConfigError
from searchain.llm.fakes.scripted import ScriptedLLM
from searchain.reasoning.chain.prompts import PromptBook
from searchain.reasoning.engine import SearChainEngine
from tests.fixtures.reasoning import QUESTION

OWN_RAG = "MY OWN WORDING.\n{passages}\nQ: {question}\nA:"


def test_a_template_in_the_folder_replaces_only_its_namesake(tmp_path):
    (tmp_path / "rag.txt").write_text(OWN_RAG, encoding="utf-8")
    own, builtin = PromptBook(tmp_path), PromptBook()
    assert own.templates["rag"] == OWN_RAG and builtin.templates["rag"] != OWN_RAG
    assert {k: v for k, v in own.templates.items() if k != "rag"} == {
        k: v for k, v in builtin.templates.items() if k != "rag"}


def test_the_engine_asks_with_the_folders_template(tmp_path, retriever):
    (tmp_path / "rag.txt").write_text(OWN_RAG, encoding="utf-8")
    llm = ScriptedLLM(["Toronto [1]. So the final answer is Toronto."])
    engine = SearChainEngine(llm, retriever, None, settings=ReasoningSettings(prompts_folder=str(tmp_path)))
    result = engine.answer(QUESTION, mode="rag")
    prompt = str(llm.calls[0])
    assert "MY OWN WORDING." in prompt and f"Q: {QUESTION}" in prompt
    assert result.answer == "Toronto"


def test_a_missing_folder_is_refused_with_its_path(tmp_path):
    with pytest.raises(ConfigError) as err:
        PromptBook(tmp_path / "nowhere")
    assert "nowhere" in str(err.value) and "prompts_folder" in err.value.hint


@pytest.mark.parametrize("content", [b"", b"  \n", b"\xff\xfe bad utf-8 \xff"])
def test_an_empty_or_unreadable_template_is_refused_with_its_path(tmp_path, content):
    (tmp_path / "tracing.txt").write_bytes(content)
    with pytest.raises(ConfigError) as err:
        PromptBook(tmp_path)
    assert "tracing.txt" in str(err.value)
