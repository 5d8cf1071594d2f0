"""A cited passage's page and section survive saving, reopening, JSON export/import and show in
exported Markdown; answers exported before they existed still import."""

import dataclasses

from searchain.store import ConversationStore
from searchain.store.markdown import answer_markdown


def _located(result):
    """``result`` citing a PDF page and a Word section instead of Wikipedia passages."""
    pdf = dataclasses.replace(result.references[0].passage, source="/home/u/docs/report.pdf",
                              page=12, section="3.2 Results")
    docx = dataclasses.replace(result.references[1].passage, source="/home/u/docs/memo.docx",
                               section="Budget > Travel")
    result.references[0] = dataclasses.replace(result.references[0], passage=pdf)
    result.references[1] = dataclasses.replace(result.references[1], passage=docx)
    result.path[0] = dataclasses.replace(result.path[0], passage=pdf)
    return result


def test_page_and_section_reload_and_show_in_markdown(tmp_path, sample_result, sample_run):
    result = _located(sample_result)
    with ConversationStore.open(tmp_path / "c.db") as store:
        cid = store.create_conversation("docs")
        store.add_user_message(cid, result.question)
        mid = store.begin_answer(cid, sample_run)
        store.finish_answer(mid, result)
    with ConversationStore.open(tmp_path / "c.db") as store:
        loaded = store.get_conversation(cid).messages[1].result
        exported = store.export_json([cid])
        markdown = store.export_markdown(cid)
    assert loaded == result
    assert (loaded.references[0].passage.page, loaded.references[0].passage.section) == (12, "3.2 Results")
    assert loaded.path[0].passage.page == 12
    title = result.references[0].passage.title
    assert f"[1] **{title}**, report.pdf, p. 12 - 3.2 Results (" in markdown
    # exports escape what a corpus wrote (#36), so the heading path's ">" is an entity there
    assert "memo.docx - Budget &gt; Travel" in answer_markdown(loaded)
    assert "memo.docx - Budget > Travel" in answer_markdown(loaded, escape_html=False)

    with ConversationStore.open(tmp_path / "other.db") as other:
        [new_id] = other.import_json(exported)
        assert other.get_conversation(new_id).messages[1].result == result


def test_an_export_without_page_and_section_still_imports(tmp_path, sample_result, sample_run):
    with ConversationStore.open(tmp_path / "c.db") as store:
        cid = store.create_conversation("old")
        store.add_user_message(cid, sample_result.question)
        mid = store.begin_answer(cid, sample_run)
        store.finish_answer(mid, sample_result)
        data = store.export_json([cid])
    for reference in data["conversations"][0]["messages"][1]["result"]["references"]:
        del reference["passage"]["page"], reference["passage"]["section"]
    with ConversationStore.open(tmp_path / "other.db") as other:
        [new_id] = other.import_json(data)
        passage = other.get_conversation(new_id).messages[1].result.references[0].passage
    assert (passage.page, passage.section) == (None, "")
