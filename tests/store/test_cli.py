"""``searchain chats ...`` end to end, through ``searchain.cli.main.main``."""

import json

import pytest

from searchain.cli.main import main
from searchain.store import ConversationStore


@pytest.fixture
def saved(home, sample_result, sample_run):
    with ConversationStore.open(home.conversations_db) as store:
        cid = store.create_conversation("Van Hook")
        store.add_user_message(cid, sample_result.question)
        mid = store.begin_answer(cid, sample_run)
        store.finish_answer(mid, sample_result)
        other = store.create_conversation("Glaciers")
        store.add_user_message(other, "How do moraines form?")
    return home, cid, other


def _run(home, *argv):
    return main(["--home", str(home.data_dir.parent), "chats", *argv])


def test_list_and_show(saved, capsys):
    home, cid, other = saved
    assert _run(home, "list", "--json") == 0
    listed = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in listed] == [other, cid]
    assert listed[1]["message_count"] == 2
    assert _run(home, "list") == 0
    assert "Van Hook" in capsys.readouterr().out
    assert _run(home, "show", str(cid)) == 0
    out = capsys.readouterr().out
    assert "### References" in out and "**Stanley**" in out
    assert _run(home, "show", str(cid), "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["conversations"][0]["messages"][1]["result"]["answer"] == "Stanley"


def test_search_rename_delete(saved, capsys):
    home, cid, other = saved
    assert _run(home, "search", "moraines") == 0
    assert f"chat {other} (Glaciers)" in capsys.readouterr().out
    assert _run(home, "rename", str(other), "Ice ages") == 0
    assert _run(home, "delete", str(other), "--yes") == 0
    capsys.readouterr()
    assert _run(home, "search", "moraines", "--json") == 0
    assert json.loads(capsys.readouterr().out) == []
    assert _run(home, "delete", str(other), "--yes") == 1
    assert "no conversation with id" in capsys.readouterr().err


def test_delete_without_yes_refuses_when_not_interactive(saved, capsys, monkeypatch):
    home, cid, _ = saved
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert _run(home, "delete", str(cid)) == 1
    assert "--yes" in capsys.readouterr().err
    with ConversationStore.open(home.conversations_db) as store:
        assert store.get_conversation(cid).message_count == 2


def test_export_and_import_files(saved, tmp_path, capsys, sample_result):
    home, cid, other = saved
    md = tmp_path / "out" / "chat.md"
    assert _run(home, "export", str(cid), "-o", str(md)) == 0
    text = md.read_text()
    assert text.index("## Answer") < text.index("[1] **Van Hook Township")
    assert _run(home, "export", "--all", "--format", "json", "-o", str(tmp_path / "all.json")) == 0
    assert _run(home, "import", str(tmp_path / "all.json")) == 0
    assert "Imported 2 conversation(s)" in capsys.readouterr().out
    with ConversationStore.open(home.conversations_db) as store:
        listed = store.list_conversations()
        assert len(listed) == 4
        copy = [c for c in listed if c.title == "Van Hook" and c.id != cid][0]
        assert store.get_conversation(copy.id).messages[1].result == sample_result
    assert _run(home, "export", str(cid), "-o", str(tmp_path)) == 1
    assert "it is a folder" in capsys.readouterr().err


def test_damaged_database_is_reported_and_reset_starts_fresh(home, capsys):
    home.conversations_db.write_bytes(b"garbage" * 1000)
    assert _run(home, "list") == 1
    err = capsys.readouterr().err
    assert "is damaged" in err and ".damaged-" in err
    assert _run(home, "reset", "--yes") == 0
    assert _run(home, "list") == 0
    assert "No saved conversations." in capsys.readouterr().out
    kept = list(home.data_dir.glob("conversations.db.*"))
    assert {p.name.split(".")[2].split("-")[0] for p in kept} == {"damaged", "old"}
