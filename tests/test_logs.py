"""`searchain.logs`: one rotating file per program, added once, bounded in size, removable."""

import logging

from searchain.logs import MAX_BYTES, log_file, recent_lines, start_file_log, stop_file_log


def test_records_reach_the_file_once_even_if_started_twice(home):
    path = start_file_log(home, "unit")
    try:
        assert start_file_log(home, "unit") == path == home.log_dir / "unit.log"
        logging.getLogger("searchain.index").info("built %d passages", 20)
        logging.getLogger("desktop.workers").warning("job failed")
        logging.getLogger("elsewhere").warning("not ours")
        logging.getLogger("searchain.index").debug("too detailed")
    finally:
        stop_file_log(home, "unit")
    text = path.read_text()
    assert text.count("built 20 passages") == 1 and "WARNING" in text and "job failed" in text
    assert "not ours" not in text and "too detailed" not in text
    logging.getLogger("searchain").info("after stop")
    assert "after stop" not in path.read_text()


def test_the_file_rotates_so_it_cannot_fill_a_disk(home):
    start_file_log(home, "big")
    try:
        for n in range(3 * MAX_BYTES // 1000 + 10):
            logging.getLogger("searchain").info("%05d %s", n, "x" * 1000)
    finally:
        stop_file_log(home, "big")
    files = sorted(home.log_dir.glob("big.log*"))
    assert [f.name for f in files] == ["big.log", "big.log.1", "big.log.2", "big.log.3"]
    assert all(f.stat().st_size <= MAX_BYTES + 1100 for f in files)


def test_an_unwritable_log_folder_does_not_stop_the_program(home):
    home.cache_dir.rmdir()
    home.cache_dir.write_text("a file where the folder should be")
    assert start_file_log(home, "app") is None


def test_recent_lines_reads_the_end_of_a_long_file(home):
    path = log_file(home, "tail")
    path.parent.mkdir(parents=True)
    path.write_text("".join(f"line {n}\n" for n in range(10_000)))
    assert recent_lines(path, 3) == ["line 9997", "line 9998", "line 9999"]
    assert recent_lines(home.log_dir / "none.log") == []
