"""Pure rendering helpers: escaping, [n] links, highlighting, date groups, ETA."""

from datetime import date, datetime, timedelta

from desktop.document import document_text
from desktop.models.conversations import ConversationRow, group_conversations
from desktop.render import (
    answer_html,
    date_group,
    describe_error,
    eta_seconds,
    format_duration,
    parse_ref_url,
    passage_html,
    ref_url,
)
from searchain.errors import CorpusError
from searchain.types import Passage


def test_answer_marks_become_links_and_text_is_escaped():
    html = answer_html("Paris [1] <b>is</b> & [2][3] and [7]", "12", marks=[1, 2, 3])
    assert '<a href="ref:12:1">[1]</a>' in html
    assert '<a href="ref:12:2">[2]</a><a href="ref:12:3">[3]</a>' in html
    assert "&lt;b&gt;is&lt;/b&gt; &amp;" in html
    assert "<b>" not in html
    assert "[7]" in html and "ref:12:7" not in html  # a mark with no reference stays text


def test_comma_marks_split_into_links():
    assert answer_html("x [1, 2]", "k").count("<a href=") == 2


def test_ref_url_round_trip_and_rejects_other_links():
    assert parse_ref_url(ref_url("abc", 4)) == ("abc", 4)
    assert parse_ref_url("https://example.com") is None
    assert parse_ref_url("ref:1:x") is None


def test_passage_highlight_escapes_and_marks_span():
    html = passage_html("<i>Paris</i> is big", (3, 8))
    assert "&lt;i&gt;" in html and "<i>" not in html
    assert "background-color" in html and "<b>Paris</b>" in html
    assert "background-color" not in passage_html("abc", (5, 9))  # bad span ignored


def test_date_groups():
    today = date(2024, 5, 20)
    at = lambda days: datetime(2024, 5, 20, 12) - timedelta(days=days)  # noqa: E731
    assert date_group(at(0), today) == "Today"
    assert date_group(at(1), today) == "Yesterday"
    assert date_group(at(3), today) == "Previous 7 days"
    assert date_group(at(20), today) == "Previous 30 days"
    assert date_group(at(100), today) == "February 2024"
    assert date_group("2024-05-20T08:00:00", today) == "Today"


def test_group_conversations_newest_first():
    rows = [ConversationRow(1, "old", "2020-01-01T00:00:00"), ConversationRow(2, "new", datetime.now().isoformat())]
    groups = group_conversations(rows)
    assert groups[0][0] == "Today" and groups[0][1][0].title == "new"
    assert groups[-1][1][0].title == "old"


def test_eta_and_duration():
    assert eta_seconds(0, 10, 0.0, now=5.0) is None
    assert eta_seconds(5, 10, 0.0, now=10.0) == 10.0
    assert format_duration(None) == "estimating…"
    assert format_duration(75) == "75 s"


def test_errors_are_readable():
    message, hint = describe_error(CorpusError("Corpus 'x' does not exist.", hint="Add it first."))
    assert message == "Corpus 'x' does not exist." and hint == "Add it first."
    message, hint = describe_error(ZeroDivisionError("division by zero"))
    assert "ZeroDivisionError" in message and "Traceback" not in message and hint


def test_index_errors_also_say_where_the_fix_is_in_the_app():
    from searchain.errors import IndexError_
    from searchain.index.layout import build_hint, rebuild_hint, repair_hint

    for hint in (build_hint("demo"), repair_hint("demo"), rebuild_hint("demo")):
        _, shown = describe_error(IndexError_("The index of 'demo' is damaged.", hint=hint))
        assert shown.startswith(hint) and "Manage corpora" in shown and "Update index" in shown
    _, shown = describe_error(IndexError_("Other trouble.", hint="Check the file."))
    assert shown == "Check the file."


def test_document_text_from_passages_locates_the_cited_one():
    parts = [Passage("c", str(i), "T", f"part {i}", doc_id="d") for i in range(3)]
    text, span = document_text(parts, parts[1])
    assert text[span[0]:span[1]] == "part 1"
    text, span = document_text("abc part 1 xyz", Passage("c", "1", "T", "part 1"))
    assert text[span[0]:span[1]] == "part 1"


def test_ingest_problems_note_names_each_file_once_and_caps_the_list():
    from searchain.corpus.problems import Problem

    from desktop.views.corpora.build_plan import SHOWN_PROBLEMS, problems_note

    class Report:
        skipped = 12
        problems = [Problem(f"/docs/f{i}.pdf", None, "encrypted PDF") for i in range(10)] + [
            Problem("/docs/bad.md", 3, "not valid UTF-8")]

    note = problems_note(Report())
    lines = note.strip().splitlines()
    assert lines[0] == "12 could not be read and were left out (the rest were read):"
    assert lines[1] == "  f0.pdf: encrypted PDF" and len(lines) == 1 + SHOWN_PROBLEMS + 1
    assert lines[-1] == "  ... and 4 more"
    Report.problems, Report.skipped = [Problem("/docs/bad.md", 3, "not valid UTF-8")], 1
    assert problems_note(Report()).strip().splitlines()[1] == "  bad.md line 3: not valid UTF-8"
    Report.problems, Report.skipped = [], 0
    assert problems_note(Report()) == ""
