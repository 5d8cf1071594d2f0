"""The Markdown export writes questions, answers and passages as text, never as live HTML.

Many Markdown viewers render inline HTML, so a question holding ``<script>`` or ``<img src=x>``
must arrive as ``&lt;script&gt;``; ``&`` is escaped too, so ``&lt;`` typed by a user stays what
they typed. Inside code spans (passage ids) nothing is HTML, so those are kept verbatim.
"""

import re

from searchain.reasoning.result import DECISION_CORRECTED, SOURCE_IR_CORRECTED, AnswerResult, Node, Reference
from searchain.store.markdown import answer_markdown, conversation_markdown
from searchain.types import Passage

HOSTILE = "<script>alert(1)</script> <img src=x> <a href=javascript:alert(1)>x</a> <b>bold</b> & &lt;"
ESCAPED = ("&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x&gt; &lt;a href=javascript:alert(1)&gt;x&lt;/a&gt; "
           "&lt;b&gt;bold&lt;/b&gt; &amp; &amp;lt;")


def hostile_result() -> AnswerResult:
    passage = Passage("demo", "p<1>`x", f"Title {HOSTILE}", f"Before {HOSTILE} after.", source="<b>src</b>.md")
    start = passage.text.index("<img")
    node = Node(1, 0, f"Query {HOSTILE}", f"LLM {HOSTILE}", reader_answer="x", confidence=2.0,
                decision=DECISION_CORRECTED, source=SOURCE_IR_CORRECTED, passage=passage)
    return AnswerResult(question=HOSTILE, mode="searchain", final_content=f"Answer {HOSTILE} [1]",
                        answer=HOSTILE, path=[node], standalone_question=f"Standalone {HOSTILE}",
                        references=[Reference(1, passage, (start, start + len("<img src=x>")), node.query, "x")])


def outside_code_spans(md: str) -> str:
    return re.sub(r"(`+)(.+?)\1", "", md)


def check(md: str) -> None:
    prose = outside_code_spans(md)
    assert "<" not in prose, [line for line in prose.splitlines() if "<" in line]
    assert ESCAPED in prose
    assert " & " not in prose


def test_answer_markdown_escapes_html_in_every_text(tmp_path):
    md = answer_markdown(hostile_result())
    check(md)
    assert f"Answer {ESCAPED} [1]" in md and f"Standalone {ESCAPED}" in md
    assert "**&lt;img src=x&gt;**" in md  # the cited span is still bold
    assert "passage `` p<1>`x ``" in md  # a code span that survives the backtick in the id


def test_the_clipboard_copy_keeps_the_text_as_the_user_saw_it():
    md = answer_markdown(hostile_result(), escape_html=False)
    assert f"Answer {HOSTILE} [1]" in md and f"**Title {HOSTILE}**" in md


def test_conversation_export_escapes_title_question_answer_and_error(conversation_store, sample_run):
    s = conversation_store
    cid = s.create_conversation(f"Title {HOSTILE}")
    s.add_user_message(cid, HOSTILE)
    mid = s.begin_answer(cid, sample_run)
    s.finish_answer(mid, hostile_result())
    s.add_user_message(cid, HOSTILE)
    s.fail_answer(s.begin_answer(cid, sample_run), f"failed {HOSTILE}", partial_text=HOSTILE)
    md = conversation_markdown(s.get_conversation(cid))
    check(md)
    assert md.startswith(f"# Title {ESCAPED}")
    assert f"*(failed: failed {ESCAPED})*" in md
