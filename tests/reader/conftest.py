"""Reader fixtures. ``tiny_dpr_reader_dir``: a tiny random DPR reader saved once per session
(built by ``searchain.reader.testing.write_tiny_dpr_reader``, usable outside tests/reader too)."""

import pytest


@pytest.fixture(scope="session")
def tiny_dpr_reader_dir(tmp_path_factory):
    from searchain.reader.testing import write_tiny_dpr_reader

    return write_tiny_dpr_reader(tmp_path_factory.mktemp("reader") / "tiny-dpr")


@pytest.fixture(scope="session")
def tiny_dpr_reader(tiny_dpr_reader_dir):
    from searchain.reader.dpr import DPRSpanReader

    return DPRSpanReader(tiny_dpr_reader_dir, max_answer_tokens=4)
