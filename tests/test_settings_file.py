"""A settings file holds only what the user changed, so improved defaults reach users who saved
settings before; a file from before (every value written) gives up the old defaults it pinned."""

import json
from dataclasses import asdict

from desktop.app import load_settings
from searchain.config import Settings
from searchain.settings_file import FORMER_DEFAULTS, SETTINGS_VERSION, VERSION_KEY, adopt_changed_defaults
from searchain.settings_schema import flatten


def _full_file(**reasoning) -> dict:
    """A settings file as versions before 2 wrote it: every value, here with old defaults pinned."""
    data = asdict(Settings())
    data["reasoning"].update(reasoning)
    return data


def test_a_saved_file_holds_only_the_changed_values_and_reads_back_equal(home):
    settings = Settings()
    settings.active_corpus = "wiki"
    settings.reasoning.theta = 2.0
    settings.ui["geometry"] = "abc"
    settings.save(home)
    saved = json.loads(home.settings_file.read_text())
    assert saved == {VERSION_KEY: SETTINGS_VERSION, "active_corpus": "wiki", "reasoning": {"theta": 2.0},
                     "ui": {"geometry": "abc"}}
    assert Settings.load(home) == settings


def test_an_old_full_file_takes_the_defaults_improved_since_and_keeps_what_the_user_chose(home):
    home.settings_file.write_text(json.dumps(_full_file(final_steps="off", feedback_style="turn", theta=2.5,
                                                        geek_branches=3)))
    notes: list[str] = []
    settings = Settings.load(home, notes=notes)
    assert settings.reasoning.final_steps == "found" and settings.reasoning.feedback_style == "inline"
    assert settings.reasoning.theta == 2.5  # never a default: the user's
    assert settings.reasoning.geek_branches == 3  # changed by the user, though the default changed too
    assert len(notes) == 2 and "reasoning.final_steps" in notes[0] + notes[1]
    assert any('config set reasoning.feedback_style "turn"' in note for note in notes)


def test_a_choice_saved_in_the_short_form_is_kept_even_when_it_is_a_former_default(home):
    settings = Settings()
    settings.reasoning.final_steps = "off"
    settings.save(home)
    notes: list[str] = []
    assert Settings.load(home, notes=notes).reasoning.final_steps == "off" and notes == []


def test_a_hand_written_file_without_a_version_is_taken_as_written(home):
    home.settings_file.write_text(json.dumps({"reasoning": {"final_steps": "off"}}))
    assert Settings.load(home).reasoning.final_steps == "off"


def test_every_former_default_is_a_real_setting_and_differs_from_todays():
    today = flatten(Settings())
    for key, olds in FORMER_DEFAULTS.items():
        assert key in today
        assert all(old != today[key] and type(old) is type(today[key]) for old in olds), key


def test_adopting_leaves_a_value_of_another_type_alone():
    data = _full_file(draft_answer=0)  # 0 is not the former default False: it is reported as a bad value
    assert adopt_changed_defaults(data, Settings()) == [] and data["reasoning"]["draft_answer"] == 0


def test_the_app_rewrites_an_old_file_in_the_short_form_once_with_a_copy_and_an_info_note(home):
    original = json.dumps(_full_file(final_steps="off"))
    home.settings_file.write_text(original)
    settings, note, kind = load_settings(home)
    assert settings.reasoning.final_steps == "found"
    assert kind == "info" and "reasoning.final_steps" in note
    [kept] = home.config_dir.glob("settings.before-*.json")
    assert kept.read_text() == original and str(kept) in note
    assert json.loads(home.settings_file.read_text()) == {VERSION_KEY: SETTINGS_VERSION}
    assert load_settings(home) == (settings, "", "")  # the next start has nothing to say
