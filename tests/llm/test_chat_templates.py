"""Every catalogue model's chat template renders the app's real prompts (CoQ rounds with feedback,
the reader, tracing, follow-up rewriting, the baselines) without error; a template without a
system role gets the system text folded into the first user turn; thinking is off and think
blocks never reach the parser."""

import pytest

from searchain.errors import ModelError
from searchain.llm.chat_prompt import ChatPromptBuilder, fold_system, strip_think
from searchain.llm.chat_templates import SPECIAL_TOKENS, TEMPLATES
from searchain.llm.models.catalogue import CATALOGUE
from searchain.reader.llm_reader import LLMReader
from searchain.reasoning.chain.prompts import PromptBook, detect_task
from searchain.reasoning.followup import PriorTurn, format_turns
from searchain.types import Passage

QUESTION = "Where was the director of the film {Inception} born?"  # braces: user text
PASSAGE = Passage("wiki", "1", "Christopher Nolan",
                  "Christopher Nolan (born 30 July 1970 in Westminster, London) is a film director.")


def _builder(family: str) -> ChatPromptBuilder:
    bos, eos = SPECIAL_TOKENS[family]
    return ChatPromptBuilder(TEMPLATES[family], bos_token=bos, eos_token=eos)


def app_prompts() -> dict[str, list[dict]]:
    """The chats the app sends, built by its own prompt builders."""
    book = PromptBook()
    coq = book.coq(QUESTION, detect_task(QUESTION))
    round_1 = "[Query 1]: Who directed Inception?\n[Answer 1]: Christopher Nolan"
    feedback = book.feedback("correction", question=QUESTION, query="Who directed Inception?",
                             answer="Steven Spielberg", passage=PASSAGE)
    turns = format_turns([PriorTurn("Who directed Inception?", "Christopher Nolan")])
    return {
        "coq": [{"role": "user", "content": coq}],
        "coq_feedback": [{"role": "user", "content": coq},
                         {"role": "assistant", "content": round_1},
                         {"role": "user", "content": feedback}],
        "reader": LLMReader(llm=None).messages(QUESTION, PASSAGE.title, PASSAGE.text),
        "tracing": [{"role": "user", "content": book.tracing(
            QUESTION, [("Who directed Inception?", "Christopher Nolan"),
                       ("Where was Christopher Nolan born?", "London")])}],
        "followup": [{"role": "user", "content": book.followup("Where was he born?", turns)}],
        "rag": [{"role": "user", "content": book.rag(QUESTION, [PASSAGE])}],
        "direct": [{"role": "user", "content": book.direct(QUESTION)}],
    }


def test_every_catalogue_entry_names_a_known_template_family():
    assert {e.template for e in CATALOGUE} <= set(TEMPLATES)
    assert {e.name for e in CATALOGUE if e.template == "qwen3"} == {
        e.name for e in CATALOGUE if e.thinking}


@pytest.mark.parametrize("entry", CATALOGUE, ids=lambda e: e.name)
def test_the_apps_prompts_render_through_every_entrys_template(entry):
    builder = _builder(entry.template)
    for name, messages in app_prompts().items():
        text = builder.render(messages)
        for m in messages:  # nothing lost: every message's text is in the prompt
            assert m["content"].strip() in text, (entry.name, name, m["role"])
        assert "{Inception}" in text or name in ("followup", "tracing")
        assert "<think>\n\n</think>" in text if entry.thinking else "<think>" not in text


def test_the_reader_prompt_really_fails_on_mistrals_own_template():
    # The bug the fold fixes: rendered as is, Mistral's template raises on the system message.
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    raw = Jinja2ChatFormatter(TEMPLATES["mistral"], eos_token="</s>", bos_token="<s>")
    reader = app_prompts()["reader"]
    with pytest.raises(Exception, match="roles must alternate|Only user and assistant"):
        raw(messages=reader)
    builder = _builder("mistral")
    assert builder.folds_system
    text = builder.render(reader)
    system, first, last = reader[0]["content"], reader[1]["content"], reader[-1]["content"]
    # the system text opens the first user turn (the worked example, if any); the question is last
    assert text.startswith(f"<s>[INST] {system}\n\n{first} [/INST]") and text.endswith(f"{last} [/INST]")
    assert text.count(system) == 1


@pytest.mark.parametrize("family", ["chatml", "qwen2.5", "qwen3", "qwen3-instruct", "llama3",
                                    "phi3"])
def test_templates_with_a_system_role_keep_it(family):
    builder = _builder(family)
    assert not builder.folds_system
    text = builder.render(app_prompts()["reader"])
    assert text.index(app_prompts()["reader"][0]["content"]) < text.index("Passage (")


def test_a_template_that_drops_the_system_text_silently_is_folded_too():
    users_only = ("{% for m in messages %}{% if m.role != 'system' %}{{ m.role }}: {{ m.content }}\n"
                  "{% endif %}{% endfor %}{% if add_generation_prompt %}assistant: {% endif %}")
    builder = ChatPromptBuilder(users_only, bos_token="", eos_token="")
    assert builder.folds_system
    text = builder.render([{"role": "system", "content": "Be brief."},
                           {"role": "user", "content": "Hi"}])
    assert text == "user: Be brief.\n\nHi\nassistant: "


def test_folding_keeps_later_rounds_extensions_of_earlier_ones():
    # The KV-cache reuse rule (a round's prompt starts with the last one's) survives the fold.
    builder = _builder("mistral")
    first = [{"role": "system", "content": "S"}, {"role": "user", "content": "Q1"}]
    later = [*first, {"role": "assistant", "content": "A1"}, {"role": "user", "content": "Q2"}]
    assert builder.render(later).startswith(builder.render(first) + "A1")


def test_fold_system():
    assert fold_system([{"role": "user", "content": "Q"}]) == [{"role": "user", "content": "Q"}]
    assert fold_system([{"role": "system", "content": "A"}, {"role": "system", "content": "B"},
                        {"role": "user", "content": "Q"}]) == [
        {"role": "user", "content": "A\n\nB\n\nQ"}]


def test_a_template_that_fails_for_other_reasons_is_still_a_clear_error():
    builder = ChatPromptBuilder("{{ raise_exception('nope') }}", bos_token="", eos_token="")
    with pytest.raises(ModelError, match="chat template rejected"):
        builder.render([{"role": "user", "content": "Q"}])


def test_strip_think():
    assert strip_think("<think>\nLet me see.\n</think>\n\n[Query 1]: x") == "[Query 1]: x"
    assert strip_think("[Query 1]: x") == "[Query 1]: x"
    assert strip_think("<think>cut off by max_tokens") == ""
    assert strip_think("reasoning opened by the prompt</think>\nLondon") == "London"
    assert strip_think("<think>a</think>One <think>b</think>two") == "One two"
