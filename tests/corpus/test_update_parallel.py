"""``corpus update --from`` reads a splittable snapshot in worker processes (#33 items 4 and 5):
the same update (counts, passages, their ids) with 1 and 3 workers."""

import pytest

pytest.importorskip("pyarrow")

from searchain.config import Settings  # noqa: E402
from searchain.corpus.manager import CorpusManager  # noqa: E402
from searchain.corpus.update import update_corpus  # noqa: E402
from searchain.events import Progress  # noqa: E402
from tests.fixtures.parquet import filler, write_parquet  # noqa: E402


def long_articles(n, changed=()):
    out = filler(n)
    for k, a in enumerate(out):  # several passages an article, so order within one matters
        words = " ".join(f"w{k}x{j}" for j in range(260))
        a["text"] = f"{a['text']} {words}.\n\nHistory\n\nIt grew {'fast' if k in changed else 'slowly'}."
    return out


def stored(manager, name):
    with manager.open_store(name) as store:
        return store.conn.execute('SELECT id, pid, text, section, doc_id, start, "end" FROM passages '
                                  "ORDER BY id").fetchall()


def test_an_update_read_by_three_workers_equals_one_read_in_process(home, tmp_path):
    old = write_parquet(tmp_path / "s1" / "a.parquet", long_articles(24), row_group_size=4)
    new_rows = long_articles(26, changed={2, 9})
    del new_rows[5]
    new = write_parquet(tmp_path / "s2" / "a.parquet", new_rows, row_group_size=4)
    manager = CorpusManager(home, Settings())
    reports = {}
    for name, workers in (("one", 1), ("three", 3)):
        manager.add(name, old, workers=1)
        messages = []
        reports[name] = update_corpus(manager, name, new, workers=workers, on_event=lambda e: isinstance(
            e, Progress) and messages.append(e.message)).to_dict()
        reports[name].pop("seconds"), reports[name].pop("corpus")
        assert any("3 worker processes" in m for m in messages) == (workers == 3)
    assert reports["one"] == reports["three"]
    assert (reports["one"]["unchanged"], reports["one"]["changed"], reports["one"]["added"],
            reports["one"]["removed"]) == (21, 2, 2, 1)
    assert stored(manager, "one") == stored(manager, "three")


def test_cli_update_takes_workers_and_refuses_a_negative_count(home, tmp_path, capsys):
    import json

    from searchain.cli.main import main

    old = write_parquet(tmp_path / "s1" / "a.parquet", long_articles(8), row_group_size=2)
    new = write_parquet(tmp_path / "s2" / "a.parquet", long_articles(9, changed={1}), row_group_size=2)
    CorpusManager(home, Settings()).add("w", old, workers=1)
    base = ["--home", str(home.config_dir.parent), "corpus", "update", "w", "--from", str(new)]
    assert main([*base, "--workers", "-1"]) == 1
    assert "--workers must be 0 (auto) to 256" in capsys.readouterr().err
    assert main([*base, "--workers", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["unchanged"], out["changed"], out["added"], out["removed"]) == (7, 1, 1, 0)
