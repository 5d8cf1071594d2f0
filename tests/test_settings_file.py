"""A settings file holds only what the user changed, so improved defaults reach users who saved
settings before; a file from before (every value written) gives up the old defaults it pinned."""

import json
import os
from dataclasses import asdict
from datetime import datetime

from desktop.app import load_settings
from searchain.config import Settings
from searchain.settings_file import FORMER_DEFAULTS, SETTINGS_VERSION, VERSION_KEY, adopt_changed_defaults
from searchain.settings_schema import flatten

BEFORE_THE_CHANGES = datetime.fromisoformat("2026-11-20T12:00:00+00:00").timestamp()
BETWEEN = datetime.fromisoformat("2026-11-27T12:00:00+00:00").timestamp()  # draft on already, turn still


def _write_full_file(home, written_at: float, **reasoning) -> str:
    """A settings file as versions before 2 wrote it (every value), last written at ``written_at``."""
    data = asdict(Settings())
    data["reasoning"].update(reasoning)
    text = json.dumps(data)
    home.settings_file.write_text(text)
    os.utime(home.settings_file, (written_at, written_at))
    return text


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
    _write_full_file(home, BEFORE_THE_CHANGES, draft_answer=False, feedback_style="turn", theta=2.5,
                     geek_branches=3)
    notes: list[str] = []
    settings = Settings.load(home, notes=notes)
    assert settings.reasoning.draft_answer is True and settings.reasoning.feedback_style == "inline"
    assert settings.reasoning.theta == 2.5  # never a default: the user's
    assert settings.reasoning.geek_branches == 3  # changed by the user, though the default changed too
    assert len(notes) == 2 and "reasoning.draft_answer" in notes[0] + notes[1]
    assert any('config set reasoning.feedback_style "turn"' in note for note in notes)


def test_a_former_default_written_after_it_changed_was_chosen_and_is_kept(home):
    _write_full_file(home, BETWEEN, draft_answer=False, feedback_style="turn")
    notes: list[str] = []
    settings = Settings.load(home, notes=notes)
    assert settings.reasoning.feedback_style == "inline"  # "turn" was still the default then
    assert settings.reasoning.draft_answer is False  # the draft was on by default then: off was chosen
    assert len(notes) == 1 and "reasoning.feedback_style" in notes[0]


def test_a_choice_saved_in_the_short_form_is_kept_even_when_it_is_a_former_default(home):
    settings = Settings()
    settings.reasoning.feedback_style = "turn"
    settings.save(home)
    os.utime(home.settings_file, (BEFORE_THE_CHANGES, BEFORE_THE_CHANGES))
    notes: list[str] = []
    assert Settings.load(home, notes=notes).reasoning.feedback_style == "turn" and notes == []


def test_a_hand_written_file_without_a_version_is_taken_as_written(home):
    home.settings_file.write_text(json.dumps({"reasoning": {"feedback_style": "turn"}}))
    os.utime(home.settings_file, (BEFORE_THE_CHANGES, BEFORE_THE_CHANGES))
    assert Settings.load(home).reasoning.feedback_style == "turn"


def test_every_former_default_is_a_real_setting_and_differs_from_todays_in_time_order():
    today = flatten(Settings())
    for key, history in FORMER_DEFAULTS.items():
        assert key in today
        assert all(old != today[key] and type(old) is type(today[key]) for old, _ in history), key
        changed = [datetime.fromisoformat(until) for _, until in history]
        assert changed == sorted(changed) and all(t.tzinfo is not None for t in changed), key


def test_adopting_leaves_a_value_of_another_type_alone():
    data = asdict(Settings())
    data["reasoning"]["draft_answer"] = 0  # not the former default False: reported as a bad value
    assert adopt_changed_defaults(data, Settings(), BEFORE_THE_CHANGES) == []
    assert data["reasoning"]["draft_answer"] == 0


def test_the_app_rewrites_an_old_file_in_the_short_form_once_with_a_copy_and_an_info_note(home):
    original = _write_full_file(home, BEFORE_THE_CHANGES, feedback_style="turn")
    settings, note, kind = load_settings(home)
    assert settings.reasoning.feedback_style == "inline"
    assert kind == "info" and "reasoning.feedback_style" in note
    [kept] = home.config_dir.glob("settings.before-*.json")
    assert kept.read_text() == original and str(kept) in note
    assert json.loads(home.settings_file.read_text()) == {VERSION_KEY: SETTINGS_VERSION}
    assert load_settings(home) == (settings, "", "")  # the next start has nothing to say


def test_the_app_rewrites_an_old_file_with_nothing_to_adopt_quietly(home):
    _write_full_file(home, BETWEEN, draft_answer=False)
    settings, note, kind = load_settings(home)
    assert (note, kind) == ("", "") and settings.reasoning.draft_answer is False
    assert json.loads(home.settings_file.read_text()) == {VERSION_KEY: SETTINGS_VERSION,
                                                          "reasoning": {"draft_answer": False}}
    assert len(list(home.config_dir.glob("settings.before-*.json"))) == 1  # the file as it was
