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
