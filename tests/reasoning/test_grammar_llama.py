"""The CoQ grammar with the real llama.cpp tiny model: bounded, well formed, always parsable."""

import pytest

from searchain.errors import ConfigError
from searchain.llm.base import GenerationParams
from searchain.reasoning.chain.grammar import coq_grammar, final_content_grammar
from searchain.reasoning.chain.parser import parse_chain
from searchain.reasoning.tracing import extract_final_content


def test_grammar_shape_and_bad_settings():
    g = coq_grammar(3, query_chars=50)
    assert 'root ::= node1 (node2 (node3)?)? final' in g and "qchar{0,49}" in g
    assert '"[Query 3]: "' in g and '"[Final Content]: "' in g
    with pytest.raises(ConfigError, match="max_nodes=0"):
        coq_grammar(0)
    # The rest of a chain whose first two steps are written (a chain written step by step).
    rest = coq_grammar(3, start=3)
    assert 'root ::= node3 final' in rest and '"[Query 1]' not in rest and '"[Query 3]: "' in rest
    assert 'root ::= node2 (node3)? final' in coq_grammar(3, start=2)
    with pytest.raises(ConfigError, match="start=4"):
        coq_grammar(3, start=4)


# Small caps: random weights rarely pick "\n", so every field runs to its cap.
SMALL = dict(query_chars=24, answer_chars=16, final_chars=40)


@pytest.mark.parametrize("seed", [0, 1])
def test_random_weights_under_grammar_end_with_final_content_and_parse(tiny_llm, seed):
    params = GenerationParams(max_tokens=1000, temperature=1.0, seed=seed, grammar=coq_grammar(4, **SMALL))
    out = tiny_llm.chat([{"role": "user", "content": "Question: who wrote it?"}], params)
    assert out.finish_reason == "stop"  # the grammar ended it, not max_tokens
    last_line = out.text.rstrip("\n").split("\n")[-1]
    assert last_line.startswith("[Final Content]: ")
    chain = parse_chain(out.text)
    assert 1 <= len(chain.steps) <= 4 and chain.final_content
    assert all(s.query for s in chain.steps)


def test_final_content_grammar_with_the_tiny_model(tiny_llm):
    params = GenerationParams(max_tokens=2000, temperature=1.0, seed=3, grammar=final_content_grammar(2, final_chars=40))
    out = tiny_llm.chat([{"role": "user", "content": "Write the final content."}], params)
    assert out.text.startswith("[Final Content]: ") and extract_final_content(out.text)
