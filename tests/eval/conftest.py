"""Eval fixtures. ``tiny_dpr_reader_dir`` repeats tests/reader's fixture (sibling conftests do
not share fixtures) until the lead moves it to tests/fixtures/ for global use."""

import pytest


@pytest.fixture(scope="session")
def tiny_dpr_reader_dir(tmp_path_factory):
    from searchain.reader.testing import write_tiny_dpr_reader

    return write_tiny_dpr_reader(tmp_path_factory.mktemp("reader") / "tiny-dpr")
