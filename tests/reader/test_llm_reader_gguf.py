"""The LLM reader over the real tiny GGUF model (random weights: its replies are gibberish)."""

from searchain.reader.llm_reader import LLMReader

PASSAGE = "Stanley is a city in Mountrail County, North Dakota. It was founded in 1902."


def test_reader_on_real_model_agrees_with_its_own_reply(tiny_llm):
    reader = LLMReader(tiny_llm, threshold=0.5, max_tokens=12)
    question, title = "When was Stanley founded?", "Stanley"
    result = reader.read(question, title, PASSAGE)
    assert 0 <= result.start <= result.end <= len(PASSAGE)
    assert result.answer == PASSAGE[result.start : result.end]
    assert 0.0 <= result.confidence <= 1.0 and result.threshold == 0.5
    # Greedy decoding is deterministic: the same call gives the reply the result was made from.
    completion = tiny_llm.chat(reader.messages(question, title, PASSAGE), reader.params())
    assert len(completion.token_logprobs) == completion.usage.completion_tokens > 0
    assert reader.result_from_reply(completion.text, PASSAGE, completion.token_logprobs) == result
