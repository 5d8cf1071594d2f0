"""Checking an installation: each finding with its fix (``searchain doctor``, Help > Check
set-up), and the report a user pastes into a problem report. ``check`` holds the finding type
every check imports."""

from ..faces import face

__all__, __getattr__, __dir__ = face(__name__, {
    "check": ("Check", "OK", "WARN", "FAIL", "worst"),
    "installation": ("run_checks",),
    "data": ("check_data",),
    "report": ("report_markdown", "system_info"),
})
