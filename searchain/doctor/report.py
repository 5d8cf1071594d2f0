"""The text a user pastes into a problem report: the checks, versions, platform, folders, log tail.

``system_info`` loads no model and touches no network; ``report_markdown`` formats the checks of
``searchain.doctor.installation.run_checks`` with it.
"""

from __future__ import annotations

import os
import platform
import sqlite3
import sys
from typing import TYPE_CHECKING

from ..units import size

if TYPE_CHECKING:
    from ..config import AppPaths
    from .check import Check

# Distribution names; a tuple is alternatives (the app needs PySide6's Essentials part only).
PACKAGES = ("searchain-desktop", "torch", "sentence-transformers", "transformers", "faiss-cpu", "hnswlib",
            "llama-cpp-python", "sqlite-utils", "numpy", ("PySide6-Essentials", "PySide6"),
            "huggingface-hub")


def system_info(paths: AppPaths) -> dict:
    """Versions, platform and folders: what a problem report needs, without loading any model."""
    from importlib import metadata

    from ..llm.models.memory import available_memory_bytes

    versions: dict[str, str | None] = {}
    for choice in PACKAGES:
        names = (choice,) if isinstance(choice, str) else choice
        versions[names[-1]] = None
        for name in names:
            try:
                versions[names[-1]] = metadata.version(name)
                break
            except metadata.PackageNotFoundError:
                continue
    memory = available_memory_bytes()
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "memory_available": size(memory) if memory else None,
        "sqlite": sqlite3.sqlite_version,
        "packages": versions,
        "folders": {"config": str(paths.config_dir), "data": str(paths.data_dir),
                    "cache": str(paths.cache_dir), "logs": str(paths.log_dir)},
    }


def report_markdown(checks: list[Check], info: dict, log_tail: list[str] | None = None) -> str:
    """A plain-text report to paste into a bug report: the checks, the system, the log's end."""
    from .check import FAIL, OK, WARN

    marks = {OK: "ok  ", WARN: "WARN", FAIL: "FAIL"}
    lines = ["# SearChain set-up check", ""]
    for c in checks:
        lines.append(f"- [{marks[c.status]}] {c.area}: {c.summary}")
        if c.fix and c.status != OK:
            lines.append(f"  fix: {c.fix}")
    lines += ["", "## System", ""]
    for key, value in info.items():
        if isinstance(value, dict):
            lines.append(f"- {key}: " + ", ".join(f"{k} {v or 'not installed'}" for k, v in value.items()))
        else:
            lines.append(f"- {key}: {value}")
    if log_tail:
        lines += ["", "## Last log lines", "", "```", *log_tail, "```"]
    return "\n".join(lines) + "\n"
