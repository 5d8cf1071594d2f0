"""Guard against a PySide6 build that corrupts Python's reference counts.

PySide6 6.12.0 on Python 3.11 drops one reference to ``None`` on every call that returns None
(``processEvents``, ``QThreadPool.start``, ...). An app that runs for a while then dies with
"Fatal Python error: none_dealloc". Pin ``PySide6-Essentials<6.12`` until that is fixed.
"""

import sys

import pytest


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="None is immortal from Python 3.12 on")
def test_qt_calls_keep_none_refcount(qapp):
    import PySide6

    before = sys.getrefcount(None)
    for _ in range(200):
        qapp.processEvents()
    lost = before - sys.getrefcount(None)
    assert lost < 50, (
        f"PySide6 {PySide6.__version__} loses a reference to None on each call ({lost} in 200 calls): "
        "the app would crash after a while. Install PySide6-Essentials<6.12."
    )
