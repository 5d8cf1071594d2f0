"""Query cleanup for FTS5: stop words go, syntax characters can never break a query."""

from searchain.index.bm25.query import fts_match_expression, keywords


def test_keywords_drop_stop_words_and_duplicates():
    assert keywords("Who is the father of the father of Zeus?") == ["father", "zeus"]


def test_only_stop_words_falls_back_to_all_tokens():
    assert keywords("Who was it?") == ["who", "was", "it"]
    assert fts_match_expression("?!") is None


def test_syntax_is_quoted_away():
    expr = fts_match_expression('AND "unbalanced NEAR(x y) -minus col:val star*')
    assert expr == '"unbalanced" OR "near" OR "x" OR "y" OR "minus" OR "col" OR "val" OR "star"'


def test_unicode_words_survive():
    assert keywords("Ångström über Zürich") == ["ångström", "über", "zürich"]


def test_title_match_phrase_partial_and_disambiguation():
    from searchain.index.bm25.query import title_match, tokenize

    q = tokenize("Where was Marie Curie born?")
    assert title_match("Marie Curie", q) == 1.0
    assert title_match("Python (programming language)", tokenize("who created python")) == 1.0
    assert title_match("Pierre Curie", q) == 0.25  # half of the content words, halved
    assert title_match("Berlin", q) == 0.0
    assert title_match("", q) == 0.0
