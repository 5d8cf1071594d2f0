"""A process killed (SIGKILL) mid-write leaves a valid database with everything it committed."""

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from searchain.store import STATE_COMPLETE, STATE_STREAMING, ConversationStore
from tests.fixtures.store import build_sample_result
from tests.store.crash_writer import answer_text

REPO_ROOT = Path(__file__).resolve().parents[2]


def _run_and_kill(db: Path, kill_after_checkpoints: int) -> list[list[str]]:
    """Start the writer, SIGKILL it after that many checkpoint reports; return all reports."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.store.crash_writer", str(db)], cwd=REPO_ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    reports: list[list[str]] = []
    try:
        seen = 0
        for line in child.stdout:
            reports.append(line.split())
            if reports[-1][0] == "checkpoint":
                seen += 1
                if seen >= kill_after_checkpoints:
                    break
        else:
            pytest.fail(f"writer stopped on its own: {child.stderr.read()}")
        child.send_signal(signal.SIGKILL)  # while it keeps writing
        child.wait()
        reports.extend(line.split() for line in child.stdout)  # printed before the kill
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
        child.stderr.close()
    assert child.returncode == -signal.SIGKILL
    return reports


@pytest.mark.parametrize("kill_after_checkpoints", [3, 60])
def test_sigkill_mid_write_loses_nothing_committed(tmp_path, kill_after_checkpoints):
    db = tmp_path / "c.db"
    reports = _run_and_kill(db, kill_after_checkpoints)

    conn = sqlite3.connect(db)  # a plain reader first: the file itself must be sound
    assert conn.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    conn.close()

    with ConversationStore.open(db) as store:
        (summary,) = store.list_conversations()
        messages = {m.id: m for m in store.get_conversation(summary.id).messages}
    committed = {int(r[1]) for r in reports if r[0] == "committed"}
    assert committed <= set(messages)
    expected = build_sample_result()
    for r in reports:
        if r[0] == "finished":
            msg = messages[int(r[1])]
            assert msg.state == STATE_COMPLETE and msg.result == expected
    # The answer that was streaming holds at least its last reported checkpoint.
    last_checkpoint = {int(r[1]): int(r[2]) for r in reports if r[0] == "checkpoint"}
    ended = {int(r[1]) for r in reports if r[0] in ("finished", "cancelled")}
    for mid, length in last_checkpoint.items():
        if mid in ended:
            continue
        msg = messages[mid]
        assert msg.state == STATE_STREAMING
        round_no = sorted(messages).index(mid) // 2
        full = answer_text(round_no)
        assert len(msg.content) >= length and full.startswith(msg.content)
