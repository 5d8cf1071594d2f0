"""Tracing: marks resolve to path nodes with passages; bad marks vanish; a fallback is composed."""

from searchain.reasoning.result import DECISION_CORRECTED, DECISION_PASS, SOURCE_LLM_VERIFIED, Node
from searchain.reasoning.tracing import (compose_from_path, extract_final_content, finalize, passage_sources,
                                         renumber_marks)
from tests.fixtures.reasoning import PASSAGES


def path():
    a = Node(1, 0, "Who is the performer of Spirit If...?", "Kevin Drew", reader_answer="Kevin Drew",
             decision=DECISION_PASS, source=SOURCE_LLM_VERIFIED, passage=PASSAGES[0], span=(40, 50))
    b = Node(1, 1, "Where was Kevin Drew born?", "Vancouver", reader_answer="Toronto",
             decision=DECISION_CORRECTED, passage=PASSAGES[1], span=(23, 30))
    c = Node(1, 2, "What is the capital?", "Ottawa")  # no passage: cannot back a mark
    return [a, b, c]


def test_marks_resolve_to_passages_and_spans():
    text, refs = finalize("[Final Content]: Kevin Drew [1] was born in Toronto [2]. So the final answer is Toronto.", path())
    assert text == "Kevin Drew [1] was born in Toronto [2]. So the final answer is Toronto."
    assert [(r.mark, r.passage.pid, r.span_text, r.answer) for r in refs] == [
        (1, "p1", "Kevin Drew", "Kevin Drew"), (2, "p2", "Toronto", "Toronto")]


def test_marks_to_no_node_or_to_a_node_without_passage_are_dropped():
    text, refs = finalize("[Final Content]: Drew [1][7]. Born in Toronto [2,3,9]. Capital Ottawa [3].", path())
    assert text == "Drew [1]. Born in Toronto [2]. Capital Ottawa."
    assert [r.mark for r in refs] == [1, 2]


def test_references_are_listed_by_number_when_the_text_cites_a_later_node_first():
    text, refs = finalize("[Final Content]: Born in Toronto [2], Kevin Drew [1] sang; Toronto [2].", path())
    assert text == "Born in Toronto [2], Kevin Drew [1] sang; Toronto [2]."  # the marks stay the tree's
    assert [(r.mark, r.passage.pid) for r in refs] == [(1, "p1"), (2, "p2")]


def test_unusable_final_content_is_composed_from_the_path():
    for model_text in ("", "[Final Content]:   ", "garbage with no marks at all"):
        text, refs = finalize(model_text, path())
        assert "Kevin Drew [1]" in text and "Toronto [2]" in text and "Ottawa" in text
        assert "[3]" not in text and [r.mark for r in refs] == [1, 2]
    assert compose_from_path(path()[:2]).endswith("So the final answer is Toronto.")


def test_final_content_extraction_stops_at_a_new_example():
    assert extract_final_content("x [Final Content]: A [1].\n[Question]: next [Query 1]: q") == "A [1]."


def test_a_closing_answer_that_is_only_a_mark_is_composed_from_the_path():
    """Qwen2.5-1.5B on HotpotQA: "So the final answer is [2]." left "So the final answer is." as
    the answer; the path's last answer closes it instead."""
    nodes = path()[:2]
    text, refs = finalize("[Final Content]: So the final answer is [2].", nodes)
    assert text.endswith("So the final answer is Toronto.") and "Toronto [2]" in text
    assert [r.mark for r in refs] == [1, 2]
    kept, _ = finalize("[Final Content]: He was born in Toronto [2]. So the final answer is Toronto [2].", nodes)
    assert kept == "He was born in Toronto [2]. So the final answer is Toronto [2]."


def test_the_tracing_prompt_shows_each_steps_evidence_around_its_answer():
    from searchain.reasoning.chain.prompts import PromptBook, evidence_excerpt

    text = "Filler words come first here. " * 20 + "Kevin Drew was born in Toronto, Ontario. " + "More filler. " * 20
    start = text.index("Toronto")
    excerpt = evidence_excerpt("Kevin Drew", text, (start, start + 7), chars=120)
    assert excerpt.startswith("Kevin Drew: ... ") and excerpt.endswith(" ...") and "born in Toronto" in excerpt
    assert len(excerpt) <= len("Kevin Drew: ... ") + 120 + len(" ...")
    assert evidence_excerpt("T", "Short  passage.", None) == "T: Short passage."
    prompt = PromptBook().tracing("Where was he born?", [("Who?", "Kevin Drew"), ("Where?", "Toronto")],
                                  ["Spirit If...: by Kevin Drew.", ""])
    assert "[Answer 1]: Kevin Drew\n[Evidence 1]: Spirit If...: by Kevin Drew.\n[Query 2]: Where?" in prompt
    assert "[Evidence 2]" not in prompt and prompt.rstrip().endswith("[Answer 2]: Toronto")


def test_a_closing_sentence_without_marks_is_kept_and_cited_where_the_path_answers_appear():
    """Qwen2.5-1.5B's tracing output on HotpotQA: a right sentence with no mark. The verified
    answers it contains get their marks; the model's words stay."""
    nodes = path()
    text, refs = finalize("[Final Content]: So the final answer is Kevin Drew, who was born in Toronto, Ontario.",
                          nodes)
    assert text == "So the final answer is Kevin Drew [1], who was born in Toronto [2], Ontario."
    assert [r.mark for r in refs] == [1, 2]
    # Ottawa (node 3) has no passage: never cited; a text naming no verified answer is composed.
    text, refs = finalize("[Final Content]: So the final answer is Ottawa.", nodes)
    assert "Kevin Drew [1]" in text and "[3]" not in text and [r.mark for r in refs] == [1, 2]


def test_passage_sources_put_the_questions_passages_first_then_the_paths_others():
    """The passage-style final answer reads RAG's passages, then what the path verified besides:
    a node's passage among the question's is not shown twice, an unbacked node has none."""
    nodes = path()  # p1 and p2 back nodes 1 and 2; node 3 has no passage
    sources, marks = passage_sources(nodes, [PASSAGES[2], PASSAGES[1]])
    assert [p.pid for p in sources] == ["p3", "p2", "p1"]
    assert marks == [4, 5, 1]  # question passages after the path's 3 nodes, then node 1
    assert passage_sources(nodes, []) == ([PASSAGES[0], PASSAGES[1]], [1, 2])


def test_marks_on_sources_become_marks_on_nodes_and_passages():
    assert renumber_marks("A [1], B [2][3] and C [3,1]. D [9].", [4, 5, 1]) == "A [4], B [5][1] and C [1][4]. D ."
    nodes = path()
    sources, marks = passage_sources(nodes, [PASSAGES[2]])
    model = ("Kevin Drew made Spirit If... [2].\nHe was born in Toronto, whose terminal is the Toronto Coach "
             "Terminal [1].\nSo the final answer is Toronto Coach Terminal.")
    text, refs = finalize(renumber_marks(model, marks), nodes, [PASSAGES[2]], "Q?")
    assert "\n" not in text and text.endswith("So the final answer is Toronto Coach Terminal.")
    assert [(r.mark, r.passage.pid) for r in refs] == [(1, "p1"), (4, "p3")]
    assert refs[1].query == "Q?" and refs[1].span_text == "Toronto Coach Terminal"
