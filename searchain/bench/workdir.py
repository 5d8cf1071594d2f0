"""Where a benchmark writes its databases and files: ``--work DIR`` (created and kept, so a
second run can reuse or inspect them) or a temporary folder removed when the run ends."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Callable


def in_work_folder(work: str | None, prefix: str, measure: Callable[[Path], dict]) -> dict:
    """``measure(folder)`` in ``work``, or in a temporary folder named ``prefix...``."""
    if work:
        Path(work).mkdir(parents=True, exist_ok=True)
        return measure(Path(work))
    with tempfile.TemporaryDirectory(prefix=prefix, ignore_cleanup_errors=True) as tmp:
        return measure(Path(tmp))
