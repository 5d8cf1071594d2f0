"""Keep library progress bars out of our output while model weights load.

transformers draws a "Loading weights" bar on stderr for every model it loads. The CLI draws
its own progress and the app has no console, so the bar is noise in both; we turn it off for
the duration of a load and restore whatever the caller had set.
"""

from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def no_transformers_progress():
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # the load that follows will say what is missing
        yield
        return
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()
