"""``searchain doctor``: check the installation and say how to fix what is wrong.

Runs ``searchain.doctor.installation.run_checks`` (read-only, offline) and prints one line per finding with
its fix; ``--report`` adds the system description and the end of the app's log, ready to paste
into a problem report. ``--check-data`` checks the user's data instead (``doctor.data``: every
database's integrity, every index against its recorded sizes and checksum, leftovers of killed
jobs); it only reports. Exit status 1 when any check failed, so scripts can use it too.
"""

from __future__ import annotations

import json

MARKS = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}


def register(sub) -> None:
    p = sub.add_parser("doctor", help="check models, corpora, indexes and settings; say how to fix problems")
    p.add_argument("--json", action="store_true", help="print the checks and the system as JSON")
    p.add_argument("--thorough", action="store_true",
                   help="also check every index file against its recorded checksum (reads the whole file)")
    p.add_argument("--check-data", action="store_true",
                   help="check the data instead: databases' integrity, index checksums and sizes, "
                        "leftovers of interrupted jobs (only reports, deletes nothing)")
    p.add_argument("--report", action="store_true",
                   help="print a report to paste into a bug report (checks, system, last log lines)")
    p.set_defaults(func=run, reads_settings_itself=True)


def run(ctx, args) -> int:
    from ..doctor.check import FAIL, worst
    from ..doctor.installation import run_checks
    from ..doctor.report import report_markdown, system_info
    from ..logs import log_file, recent_lines

    if args.check_data:
        from ..doctor.data import check_data

        checks = check_data(ctx.paths)
    else:
        checks = run_checks(ctx.paths, thorough=args.thorough)
    if args.json:
        print(json.dumps({"status": worst(checks), "checks": [c.to_dict() for c in checks],
                          "system": system_info(ctx.paths)}, indent=2))
    elif args.report:
        print(report_markdown(checks, system_info(ctx.paths),
                              recent_lines(log_file(ctx.paths, "desktop"), 40)), end="")
    else:
        for c in checks:
            print(f"[{MARKS[c.status]}] {c.area:<13} {c.summary}")
            if c.fix and c.status != "ok":
                print(f"{'':20}fix: {c.fix}")
        counts = {s: sum(c.status == s for c in checks) for s in MARKS}
        print(f"\n{counts['ok']} ok, {counts['warn']} warning(s), {counts['fail']} problem(s).")
    return 1 if worst(checks) == FAIL else 0
