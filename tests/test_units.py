"""One way to write sizes, durations and counts (searchain.units), used by every message."""

import doctest

from searchain import units
from searchain.units import clock, count, duration, size


def test_the_module_examples_hold():
    assert doctest.testmod(units).failed == 0


def test_sizes_are_decimal_with_one_decimal():
    assert [size(n) for n in (0, 999, 1000, 12_345, 98_000_000, 1_949_000_000, 2.5e12)] == \
        ["0 B", "999 B", "1.0 kB", "12.3 kB", "98.0 MB", "1.9 GB", "2.5 TB"]
    assert size(None) == "?" and size(None, unknown="—") == "—"


def test_a_corpus_reads_the_same_size_in_the_list_and_in_the_build_plan():
    """The defect that asked for one module: 2.04e9 bytes read "1.9 GB" (1024-based) in
    ``corpus list`` and "2.0 GB" in the build plan."""
    from searchain.cli.corpus import command as corpus_cli
    from searchain.index.build import plan

    assert corpus_cli.size is plan.size is size
    assert size(2_040_000_000) == "2.0 GB"


def test_durations_say_as_much_as_an_estimate_deserves():
    assert [duration(x) for x in (-5, 0, 0.2, 30, 89, 600, 7200, 3 * 86400)] == \
        ["0 s", "0 s", "1 s", "30 s", "89 s", "10 min", "2 h 00 min", "3.0 days"]


def test_counts_read_as_written():
    from searchain.units import counted

    assert [counted(n, "round") for n in (0, 1, 2, 12000)] == ["0 rounds", "1 round", "2 rounds", "12,000 rounds"]
    assert counted(1, "entry", "entries") == "1 entry" and counted(3, "entry", "entries") == "3 entries"


def test_clock_and_count():
    assert clock(75) == "1:15" and clock(3725) == "1:02:05"
    assert [count(v) for v in (7, 950, 12_300, 4_100_000, 2e9, 2.5)] == ["7", "950", "12.3k", "4.1M", "2.0G", "2.5"]


def test_timestamps_are_utc_iso_and_sort_as_text():
    from datetime import datetime

    from searchain.units import timestamp

    first, fine = timestamp(), timestamp("microseconds")
    assert datetime.fromisoformat(first).utcoffset().total_seconds() == 0 and len(first) == 25
    assert "." in fine and fine[:19] >= first[:19]
