"""The LLM reader's span location and confidence, driven by a scripted chat model.

The scripted model stands in only for what the model *says*; prompting, parsing, locating the
span and the confidence arithmetic are the real code. The real tiny GGUF run is in
test_llm_reader_gguf.py.
"""

import math

import pytest

from searchain.llm.base import Completion, GenerationParams, Usage
from searchain.reader.base import Reader
from searchain.reader.llm_reader import LLMReader, clean_reply, confidence_from_logprobs, locate_span

PASSAGE = 'Stanley is a city in, and the county seat of, Mountrail County, North Dakota, United States. "It" was founded in 1902.'


class ScriptedLLM:
    """Replies with fixed texts in order and records every call."""

    name = "scripted"
    supports_grammar = False

    def __init__(self, replies, logprobs=(-0.1, -0.3)):
        self.replies = list(replies)
        self.logprobs = tuple(logprobs)
        self.calls = []

    def chat(self, messages, params=GenerationParams(), *, on_token=None, cancel=None):
        self.calls.append((messages, params))
        text = self.replies.pop(0)
        return Completion(text=text, usage=Usage(10, 10, 2), finish_reason="stop",
                          token_logprobs=self.logprobs if params.logprobs else ())

    def complete(self, prompt, params=GenerationParams(), *, on_token=None, cancel=None):
        raise AssertionError("the reader must use chat()")

    def close(self):
        pass


@pytest.mark.parametrize(
    "span, expected",
    [
        ("Mountrail County", "Mountrail County"),  # exact
        ("mountrail   county", "Mountrail County"),  # case and spacing
        ("Mountrail County.", "Mountrail County"),  # trailing punctuation the passage lacks here
        ("Mountrail Countyy", "Mountrail County"),  # fuzzy window, punctuation trimmed
        ("founded in 1902", "founded in 1902"),
    ],
)
def test_locate_span_finds_the_passage_text(span, expected):
    start, end = locate_span(span, PASSAGE)
    assert PASSAGE[start:end] == expected


def test_locate_span_rejects_text_not_in_passage():
    assert locate_span("Bismarck", PASSAGE) is None
    assert locate_span("", PASSAGE) is None
    assert locate_span("Stanley", "") is None


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("Answer: Stanley\nbecause ...", "Stanley"),
        ('"Mountrail County"', "Mountrail County"),
        ("NOT FOUND", ""),
        ("The passage does not contain the answer.", ""),
        ("  ", ""),
    ],
)
def test_clean_reply(reply, expected):
    assert clean_reply(reply) == expected


def test_confidence_is_geometric_mean_probability():
    assert confidence_from_logprobs([-0.1, -0.3]) == pytest.approx(math.exp(-0.2))
    assert confidence_from_logprobs([]) == 0.0
    assert confidence_from_logprobs([0.0]) == pytest.approx(1.0)


def test_reader_returns_located_span_and_confidence():
    llm = ScriptedLLM(["Answer: mountrail county"])
    reader = LLMReader(llm, threshold=0.4)
    assert isinstance(reader, Reader)
    result = reader.read("Which county is Stanley in?", "Stanley, North Dakota", PASSAGE)
    assert result.answer == "Mountrail County" == PASSAGE[result.start : result.end]
    assert result.confidence == pytest.approx(math.exp(-0.2)) and result.threshold == 0.4
    messages, params = llm.calls[0]
    assert params.logprobs and params.temperature == 0.0
    assert "Which county is Stanley in?" in messages[-1]["content"] and PASSAGE in messages[-1]["content"]


def test_reader_not_found_gives_zero_confidence():
    reader = LLMReader(ScriptedLLM(["Bismarck"]))
    result = reader.read("What is the capital?", "t", PASSAGE)
    assert (result.answer, result.start, result.end, result.confidence) == ("", 0, 0, 0.0)


def test_reader_without_logprobs_never_claims_confidence():
    reader = LLMReader(ScriptedLLM(["Stanley"], logprobs=()))
    result = reader.read("q", "t", PASSAGE)
    assert result.answer == "Stanley" and result.confidence == 0.0


def test_read_many_keeps_input_order():
    reader = LLMReader(ScriptedLLM(["one", "two", "NOT FOUND"]))
    results = reader.read_many("q", [("a", "number one"), ("b", "number two"), ("c", "three")])
    assert [r.answer for r in results] == ["one", "two", ""]
