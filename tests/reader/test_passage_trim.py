"""The LLM reader may read only the sentences of a passage that can hold the answer (#37)."""

from __future__ import annotations

from searchain.llm.fakes.scripted import ScriptedLLM
from searchain.reader.llm_reader import LLMReader
from searchain.reader.passage_trim import sentences, trim_passage

PASSAGE = ("The Velmor Bridge is a steel arch bridge over the Hanna River. It opened in 1911. "
           "It was designed by the engineer Ruth Calloway, who also built the Dunmere viaduct. "
           "The bridge was repainted in 2004.")


def test_sentences_are_verbatim_pieces():
    parts = sentences(PASSAGE)
    assert len(parts) == 4 and all(p in PASSAGE for p in parts)


def test_trim_keeps_the_sentences_most_like_the_question_in_order():
    trimmed = trim_passage("Who designed the Velmor Bridge?", PASSAGE, 2)
    assert trimmed == ("The Velmor Bridge is a steel arch bridge over the Hanna River. "
                       "It was designed by the engineer Ruth Calloway, who also built the Dunmere viaduct.")
    assert trim_passage("Who designed it?", PASSAGE, 0) == PASSAGE
    assert trim_passage("Who designed it?", "One sentence only.", 2) == "One sentence only."


def test_the_reader_reads_the_trimmed_passage_and_locates_in_the_whole():
    model = ScriptedLLM(["Ruth Calloway"])
    reader = LLMReader(model, sentences=2)
    result = reader.read("Who designed the Velmor Bridge?", "Velmor Bridge", PASSAGE)
    assert PASSAGE[result.start:result.end] == "Ruth Calloway"
    shown = model.calls[0][-1]["content"]
    assert "repainted" not in shown and "Ruth Calloway" in shown
