"""``searchain doctor --check-data``: finds damaged databases, indexes that do not match their
recorded sizes, and leftovers of killed jobs; names each with a hint; deletes nothing."""

from __future__ import annotations

import json
import os
import time

from searchain.cli.main import main
from searchain.doctor.check import FAIL, OK, WARN
from searchain.doctor.data import check_data
from searchain.index.layout import IndexLayout
from searchain.store import ConversationStore
from tests.fixtures.index import MINI_CORPUS


def doctor_json(home, capsys) -> tuple[int, list[dict]]:
    capsys.readouterr()
    rc = main(["--home", str(home.config_dir.parent), "doctor", "--check-data", "--json"])
    return rc, json.loads(capsys.readouterr().out)["checks"]


def test_a_healthy_home_is_all_ok(indexed_copy, capsys):
    ConversationStore.open(indexed_copy.conversations_db).close()
    rc, checks = doctor_json(indexed_copy, capsys)
    assert rc == 0 and {c["status"] for c in checks} == {OK}, checks
    summaries = " | ".join(c["summary"] for c in checks)
    assert "corpus 'mini' passages: database intact" in summaries
    assert "corpus 'mini' index: sizes and checksum match" in summaries
    assert "conversations: database intact" in summaries


def test_damage_and_leftovers_are_each_reported_with_a_hint_and_nothing_is_deleted(indexed_copy, capsys):
    folder = indexed_copy.corpora_dir / MINI_CORPUS
    layout = IndexLayout(folder / "index")
    with open(layout.compact_file, "r+b") as fh:  # an index cut short, as by a full disk
        fh.truncate(layout.compact_file.stat().st_size // 2)
    conversations = indexed_copy.conversations_db
    with ConversationStore.open(conversations) as store:
        for k in range(30):  # enough rows for several b-tree pages
            store.add_user_message(store.create_conversation(f"chat {k}"), "a question " * 40)
    data = bytearray(conversations.read_bytes())
    for page in range(2, len(data) // 4096):  # keep the header page, trample the b-tree pages
        data[page * 4096 + 8:page * 4096 + 64] = b"\xa5" * 56
    conversations.write_bytes(bytes(data))
    leftovers = [indexed_copy.corpora_dir / ".import-other-x1", folder / ".rebuild-abc"]
    for p in leftovers:
        p.mkdir()
    old_tmp = indexed_copy.config_dir / ".settings.json.k2j.tmp"
    old_tmp.write_text("{")
    young_tmp = indexed_copy.config_dir / ".settings.json.new.tmp"  # a write under way now
    young_tmp.write_text("{")
    hour_ago = time.time() - 3600
    os.utime(old_tmp, (hour_ago, hour_ago))

    rc, checks = doctor_json(indexed_copy, capsys)
    assert rc == 1
    by_status = {s: [c for c in checks if c["status"] == s] for s in (OK, WARN, FAIL)}
    failed = " | ".join(c["summary"] for c in by_status[FAIL])
    assert "corpus 'mini' index" in failed and str(layout.compact_file) in failed
    assert "conversations" in failed
    assert all(c["fix"] for c in by_status[FAIL] + by_status[WARN])
    warned = {c["summary"].rsplit(": ", 1)[1] for c in by_status[WARN]}
    assert warned == {str(p) for p in leftovers + [old_tmp]}
    assert any(c["summary"].startswith("corpus 'mini' passages: database intact") for c in by_status[OK])
    # It only reports: everything it found is still there.
    assert all(p.exists() for p in leftovers + [old_tmp, young_tmp, layout.compact_file])


def test_an_empty_home_has_nothing_to_check(home):
    assert [(c.status, c.summary) for c in check_data(home)] == [(OK, "no leftovers of interrupted jobs")]
