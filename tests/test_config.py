import json

import pytest

from searchain.config import AppPaths, Settings
from searchain.errors import ConfigError


def test_home_env_puts_every_directory_under_one_folder(home, tmp_path):
    assert home.config_dir == tmp_path / "home" / "config"
    assert home.data_dir == tmp_path / "home" / "data"
    assert home.corpora_dir.is_dir() and home.models_dir.is_dir()


def test_explicit_home_wins_over_environment(home, tmp_path):
    other = AppPaths.resolve(tmp_path / "other")
    assert other.data_dir == tmp_path / "other" / "data"


def test_settings_round_trip(home):
    s = Settings()
    s.active_corpus = "wiki"
    s.reasoning.theta = 2.0
    s.llm.n_gpu_layers = 0
    s.save(home)
    loaded = Settings.load(home)
    assert loaded == s


def test_missing_settings_file_gives_defaults(home):
    assert Settings.load(home) == Settings()


def test_unknown_keys_are_ignored_and_ints_accepted_for_floats(home):
    home.settings_file.write_text(json.dumps({"future": 1, "reasoning": {"theta": 2, "x": 0}}))
    s = Settings.load(home)
    assert s.reasoning.theta == 2.0 and isinstance(s.reasoning.theta, float)


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("{not json", "Cannot read settings file"),
        ("[1, 2]", "does not hold a JSON object"),
        ('{"reasoning": {"r_max": "five"}}', "reasoning.r_max must be a number"),
        ('{"llm": {"use_grammar": 1}}', "llm.use_grammar must be true or false"),
        ('{"llm": 3}', "settings.llm must be an object"),
    ],
)
def test_bad_settings_file_is_a_clear_error(home, content, fragment):
    home.settings_file.write_text(content)
    with pytest.raises(ConfigError) as info:
        Settings.load(home)
    assert fragment in str(info.value)
    assert str(home.settings_file) in str(info.value) or "." in fragment


@pytest.mark.parametrize(
    "content, fragment",
    [
        ('{"retrieval": {"retriever": "hybird"}}', "retrieval.retriever must be one of dense, bm25, hybrid"),
        ('{"reasoning": {"top_k": 0}}', "reasoning.top_k must be at least 1"),
        ('{"retrieval": {"hybrid_dense_weight": 1.5}}', "retrieval.hybrid_dense_weight must be at most 1"),
        ('{"llm": {"n_batch": 1000000000000000000000000}}', "llm.n_batch must be at most 65536"),
        ('{"llm": {"n_ctx": 4096.5}}', "llm.n_ctx must be a whole number"),
        ('{"llm": {"n_ctx": Infinity}}', "llm.n_ctx must be a number"),
        ('{"reasoning": {"theta": NaN}}', "reasoning.theta must be a number"),
        ('{"reasoning": {"mode": "fast"}}', "reasoning.mode must be one of searchain, coq, direct, rag"),
    ],
)
def test_values_outside_their_choices_or_range_are_refused_with_the_fix(home, content, fragment):
    home.settings_file.write_text(content)
    with pytest.raises(ConfigError) as info:
        Settings.load(home)
    assert fragment in info.value.message
    assert "searchain config reset" in info.value.hint and str(home.settings_file) in info.value.hint


def test_lenient_load_keeps_the_good_values_and_says_what_it_replaced(home):
    home.settings_file.write_text(json.dumps({
        "active_corpus": "wiki",
        "retrieval": {"retriever": "bm25", "hybrid_method": "score", "retreiver": "dense"},
        "reasoning": {"top_k": -3, "r_max": 7, "mode": "fast"},
        "llm": {"use_grammar": "yes", "n_ctx": 2048},
    }))
    problems: list[str] = []
    s = Settings.load(home, problems)
    assert (s.active_corpus, s.retrieval.retriever, s.reasoning.r_max, s.llm.n_ctx) == ("wiki", "bm25", 7, 2048)
    assert s.retrieval.hybrid_method == "score"  # the old spelling is still read
    defaults = Settings()
    assert (s.reasoning.top_k, s.reasoning.mode, s.llm.use_grammar) == (
        defaults.reasoning.top_k, defaults.reasoning.mode, defaults.llm.use_grammar)
    assert len(problems) == 4
    assert "Unknown setting 'retrieval.retreiver' (ignored; did you mean retrieval.retriever?)." in problems
    assert "settings.reasoning.top_k must be at least 1; got -3. Using the default." in problems
    assert any("llm.use_grammar must be true or false" in p for p in problems)


def test_schema_choices_match_what_the_engine_accepts():
    from searchain.index.embed.device import DEVICES
    from searchain.index.hybrid import METHODS
    from searchain.index.embed.precision import PRECISIONS
    from searchain.index.retrievers import KINDS
    from searchain.llm.loader import BACKENDS, ISOLATIONS
    from searchain.llm.server.openai_backend import FAMILIES, GRAMMAR_MODES
    from searchain.reader.loader import READER_CHOICES
    from searchain.reasoning.modes import MODES
    from searchain.reasoning.chain.prompts import TASKS
    from searchain.reasoning.loop.stepwise import CHAIN_STEPS, FEEDBACK_STYLES
    from searchain.reasoning.tracing import FINAL_ANSWERS, FINAL_STEPS
    from searchain.settings_schema import CHOICES, RANGES, flatten

    assert CHOICES == {
        "retrieval.retriever": KINDS, "retrieval.hybrid_method": METHODS, "llm.backend": BACKENDS,
        "reasoning.mode": MODES, "reasoning.reader": READER_CHOICES, "reasoning.task": ("auto",) + TASKS,
        "reasoning.final_answer": FINAL_ANSWERS, "reasoning.chain_steps": CHAIN_STEPS,
        "reasoning.feedback_style": FEEDBACK_STYLES, "reasoning.final_steps": FINAL_STEPS,
        "retrieval.embed_precision": PRECISIONS, "retrieval.embed_device": DEVICES, "llm.isolation": ISOLATIONS,
        "llm.server_grammar": GRAMMAR_MODES, "llm.server_family": FAMILIES,
    }
    keys = flatten(Settings())
    assert set(CHOICES) <= set(keys) and set(RANGES) <= set(keys)
    # The defaults themselves pass every rule.
    from searchain.settings_schema import problem
    assert [k for k, v in keys.items() if problem(k, v)] == []


def test_dotted_access_sets_checked_values_and_suggests_keys():
    from searchain.settings_schema import get_value, parse_value, with_default, with_value

    s = with_value(Settings(), "reasoning.top_k", parse_value("3", 1))
    assert get_value(s, "reasoning.top_k") == 3 and Settings().reasoning.top_k == 1
    s = with_value(s, "llm.use_grammar", parse_value("False", True))
    assert s.llm.use_grammar is False
    assert with_value(s, "active_corpus", parse_value("wiki", "demo")).active_corpus == "wiki"
    assert with_value(s, "active_corpus", parse_value('"12"', "demo")).active_corpus == "12"
    assert get_value(with_default(s, "reasoning.top_k"), "reasoning.top_k") == 1
    with pytest.raises(ConfigError) as info:
        with_value(s, "reasoning.topk", 2)
    assert "reasoning.top_k" in info.value.hint
    with pytest.raises(ConfigError, match="must be a number"):
        with_value(s, "reasoning.r_max", parse_value("five", 5))


def test_corpus_file_size_limit_setting():
    from searchain.settings_schema import parse_value, with_value

    assert Settings().corpus.max_file_bytes == 200_000_000
    s = with_value(Settings(), "corpus.max_file_mb", parse_value("0.5", 200.0))
    assert s.corpus.max_file_bytes == 500_000
    assert with_value(s, "corpus.max_file_mb", 0.0).corpus.max_file_bytes is None  # 0: no limit
    with pytest.raises(ConfigError, match="corpus.max_file_mb must be at least 0"):
        with_value(s, "corpus.max_file_mb", -1.0)
    assert Settings.from_dict({"corpus": {"max_file_mb": 25}}).corpus.max_file_mb == 25.0
