"""`searchain config`: show, get, set (checked), reset, and repairing a file other commands refuse."""

import json

from searchain.cli.main import main
from searchain.config import Settings


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_set_get_show_and_reset(home, capsys):
    assert run(capsys, "config", "set", "reasoning.top_k", "3")[:2] == (0, "reasoning.top_k = 3\n")
    assert run(capsys, "config", "set", "retrieval.retriever", "bm25")[0] == 0
    assert Settings.load(home).reasoning.top_k == 3 and Settings.load(home).retrieval.retriever == "bm25"
    assert run(capsys, "config", "get", "retrieval.retriever")[1] == "bm25\n"
    code, out, _ = run(capsys, "config", "show", "--changed", "--json")
    assert json.loads(out) == {"retrieval.retriever": "bm25", "reasoning.top_k": 3}
    code, out, _ = run(capsys, "config", "show")
    assert "* reasoning.top_k" in out and "(default 1)" in out and "  llm.n_ctx" in out
    assert run(capsys, "config", "reset", "reasoning.top_k")[0] == 0
    assert Settings.load(home).reasoning.top_k == 1 and Settings.load(home).retrieval.retriever == "bm25"
    assert run(capsys, "config", "path")[1].strip() == str(home.settings_file)


def test_bad_keys_and_values_are_refused_and_nothing_is_written(home, capsys):
    run(capsys, "config", "set", "reasoning.r_max", "4")
    before = home.settings_file.read_text()
    code, _, err = run(capsys, "config", "set", "retrieval.retreiver", "bm25")
    assert code == 1 and "There is no setting 'retrieval.retreiver'" in err and "retrieval.retriever" in err
    code, _, err = run(capsys, "config", "set", "retrieval.retriever", "bm52")
    assert code == 1 and "must be one of dense, bm25, hybrid" in err
    code, _, err = run(capsys, "config", "set", "reasoning.top_k", "0")
    assert code == 1 and "must be at least 1" in err
    code, _, err = run(capsys, "config", "reset")
    assert code == 1 and "--all" in err
    assert home.settings_file.read_text() == before


def test_config_repairs_a_file_that_other_commands_refuse(home, capsys):
    home.settings_file.write_text(json.dumps({"reasoning": {"top_k": -3, "r_max": 7}, "ui": {"text_zoom": 2}}))
    code, _, err = run(capsys, "corpus", "list")
    assert code == 1 and "reasoning.top_k must be at least 1" in err and "searchain config reset" in err
    code, out, err = run(capsys, "config", "reset", "reasoning.top_k")
    assert code == 0 and "warning: settings.reasoning.top_k must be at least 1" in err
    settings = Settings.load(home)  # strict: the file is valid again
    assert settings.reasoning.top_k == 1 and settings.reasoning.r_max == 7 and settings.ui == {"text_zoom": 2}


def test_reset_all_keeps_the_window_layout(home, capsys):
    home.settings_file.write_text(json.dumps({"active_corpus": "wiki", "ui": {"text_zoom": 2}}))
    assert run(capsys, "config", "reset", "--all", "--yes")[0] == 0
    assert Settings.load(home) == Settings(ui={"text_zoom": 2})


def test_the_server_key_is_kept_but_never_printed(home, capsys):
    code, out, _ = run(capsys, "config", "set", "llm.server_key", "sk-secret-93")
    assert code == 0 and "sk-secret-93" not in out and "hidden" in out
    assert Settings.load(home).llm.server_key == "sk-secret-93"
    for argv in (("config", "get", "llm.server_key"), ("config", "show"), ("config", "show", "--json")):
        code, out, _ = run(capsys, *argv)
        assert code == 0 and "sk-secret-93" not in out and "(set, hidden)" in out
    code, _, err = run(capsys, "config", "set", "llm.server_timeout", "0")
    assert code == 1 and "llm.server_timeout must be at least 1" in err
    code, _, err = run(capsys, "config", "set", "llm.server_grammar", "maybe")
    assert code == 1 and "must be one of auto, on, off" in err


def test_reset_all_repairs_a_settings_file_that_is_not_json_and_keeps_a_copy(home, capsys):
    """Exactly when a user needs it: the file is garbage and every command refuses to run."""
    for garbage in (b"garbage{{{", b"\xff\xfe\x00not text", b"[1, 2]"):
        home.settings_file.write_bytes(garbage)
        code, _, err = run(capsys, "corpus", "list")
        assert code == 1 and "searchain config reset --all" in err
        code, out, err = run(capsys, "config", "reset", "--all", "--yes")
        assert code == 0 and "back at its default" in out, err
        assert Settings.load(home) == Settings()
        copies = list(home.settings_file.parent.glob("settings.json.unreadable-*"))
        assert len(copies) == 1 and copies[0].read_bytes() == garbage and str(copies[0]) in err
        copies[0].unlink()


def test_other_config_commands_on_a_garbage_file_point_at_reset_all(home, capsys):
    home.settings_file.write_text("garbage{{{")
    for argv in (("config", "set", "reasoning.top_k", "3"), ("config", "reset", "reasoning.top_k"),
                 ("config", "show")):
        code, _, err = run(capsys, *argv)
        assert code == 1 and "Cannot read settings file" in err and "config reset --all" in err
    assert home.settings_file.read_text() == "garbage{{{"  # nothing overwritten
