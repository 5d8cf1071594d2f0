"""Full-text search over messages: relevant hits, and any user text is safe to search for."""

import pytest

from searchain.store import SNIPPET_CLOSE, SNIPPET_OPEN
from searchain.store.search import fts_query


@pytest.fixture
def filled(conversation_store, sample_result, sample_run):
    s = conversation_store
    county = s.create_conversation("County seat")
    s.add_user_message(county, sample_result.question)
    mid = s.begin_answer(county, sample_run)
    s.finish_answer(mid, sample_result)
    other = s.create_conversation("Café")
    s.add_user_message(other, "Who founded the Café de Flore in Paris? C++ \"quoted\" NEAR(x")
    return s, county, other, mid


def test_finds_messages_with_every_word(filled):
    s, county, other, answer_id = filled
    hits = s.search("seat Stanley")
    assert [(h.conversation_id, h.message_id, h.role) for h in hits] == [
        (county, answer_id, "assistant")]
    assert f"{SNIPPET_OPEN}Stanley{SNIPPET_CLOSE}" in hits[0].snippet
    assert hits[0].conversation_title == "County seat"
    assert {h.conversation_id for h in s.search("Van Hook")} == {county}


def test_last_word_matches_as_prefix_and_accents_fold(filled):
    s, county, other, _ = filled
    assert {h.conversation_id for h in s.search("Mountr")} == {county}
    assert [h.conversation_id for h in s.search("cafe flore")] == [other]


@pytest.mark.parametrize("text", ['"', 'C++ "quoted', "NEAR(x", "AND OR NOT", "*", "a:b ^c",
                                  "-", "'); DROP TABLE messages; --", "\x00"])
def test_hostile_queries_never_raise(filled, text):
    s, *_ = filled
    s.search(text)  # must not raise an FTS5 syntax error
    assert s.db["messages"].count == 3


def test_operators_are_searched_as_words(filled):
    s, county, other, _ = filled
    assert [h.conversation_id for h in s.search('NEAR( "quoted')] == [other]
    assert s.search("") == [] and s.search("  ,;  ") == []


def test_fts_query_quotes_each_word():
    assert fts_query('say "hi" NOT me') == '"say" "hi" "NOT" "me"*'
    assert fts_query("...") is None


def test_renamed_checkpointed_and_limited(conversation_store, sample_run):
    s = conversation_store
    for i in range(5):
        cid = s.create_conversation(f"chat {i}")
        s.add_user_message(cid, f"question about glaciers number {i}")
    assert len(s.search("glaciers", limit=3)) == 3
    cid = s.create_conversation()
    mid = s.begin_answer(cid, sample_run)
    s.cancel_answer(mid, partial_text="Moraines are left by retreating ice")
    assert [h.message_id for h in s.search("moraines")] == [mid]
