"""The LLM reader over the real tiny GGUF model (random weights: its replies are gibberish).

Gibberish is the point: under the passage-span grammar even a model that knows nothing can only
copy the passage, so its reply is a span of it and the reader locates it.
"""

import pytest

from searchain.reader.llm_reader import NOT_FOUND, LLMReader
from searchain.reader.span_grammar import passage_span_grammar

PASSAGE = "Stanley is a city in Mountrail County, North Dakota. It was founded in 1902."


def _squeeze(text: str) -> str:
    return " ".join(text.split())


def test_reader_on_real_model_answers_with_a_span_of_the_passage(tiny_llm):
    reader = LLMReader(tiny_llm, threshold=0.5, max_tokens=12)
    question, title = "When was Stanley founded?", "Stanley"
    result = reader.read(question, title, PASSAGE)
    assert 0 <= result.start <= result.end <= len(PASSAGE)
    assert result.answer == PASSAGE[result.start : result.end]
    assert 0.0 <= result.confidence <= 1.0 and result.threshold == 0.5
    # Greedy decoding is deterministic: the same call gives the reply the result was made from,
    # and under the grammar that reply is the passage's own text.
    params = reader.params(PASSAGE)
    assert params.grammar is not None
    completion = tiny_llm.chat(reader.messages(question, title, PASSAGE), params)
    reply = _squeeze(completion.text)
    assert reply and (reply in _squeeze(PASSAGE) or reply == NOT_FOUND)
    assert len(completion.token_logprobs) == completion.usage.completion_tokens > 0
    again = reader.result_from_reply(completion.text, PASSAGE, completion.token_logprobs, question=question,
                                     cut_off=completion.finish_reason == "length")
    assert (again.answer, again.start, again.end) == (result.answer, result.start, result.end)
    # (KV-cache reuse evaluates the prompt in other batches: logits differ in the last bits)
    assert again.confidence == pytest.approx(result.confidence, rel=1e-4)


@pytest.mark.parametrize("output, verdict", [
    ("Mountrail County", "complete"),
    (" North Dakota.", "complete"),
    ("1902", "complete"),
    ("1902\n", "complete"),  # the line may end (the reader's stop sequence)
    ("1902\n\n", "rejected"),
    ("NOT FOUND", "complete"),
    ("Mountrail", "complete"),
    ("Mountrail Cou", "incomplete"),
    ("Bismarck", "rejected"),
    ("County Mountrail", "rejected"),
    ("Dakota . It", "rejected"),  # a space the passage does not have
    ("<|im_end|>", "rejected"),
])
def test_span_grammar_accepts_exactly_the_passage_spans(tiny_llm, output, verdict):
    grammar = passage_span_grammar(PASSAGE, NOT_FOUND)
    assert tiny_llm.grammar_verdict(grammar, output) == verdict


def test_per_passage_grammars_do_not_pile_up_in_the_backend(tiny_llm):
    from searchain.llm.llama.sampling import GRAMMAR_CACHE_SIZE

    reader = LLMReader(tiny_llm, max_tokens=2)
    passages = [f"Passage number {i} says that town {i} was founded in {1800 + i}." for i in range(GRAMMAR_CACHE_SIZE + 4)]
    results = [reader.read("When was the town founded?", "t", p) for p in passages]
    assert all(r.answer == p[r.start:r.end] for r, p in zip(results, passages))
    assert len(tiny_llm._grammars) == GRAMMAR_CACHE_SIZE  # the oldest were freed
    again = reader.read("When was the town founded?", "t", passages[0])  # evicted, compiled again
    assert (again.answer, again.start) == (results[0].answer, results[0].start)
