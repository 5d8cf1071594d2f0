"""``searchain config path|show|get|set|reset``: read and change settings without editing JSON.

Every value is checked as it is set (type, allowed choices, range), and an unknown key is
answered with the closest real ones. These commands read the settings file leniently, so they
still run, and can repair it, when it holds a bad value that makes other commands refuse. A file
that is not JSON at all is repaired by ``reset --all``, which moves it aside first.
"""

from __future__ import annotations

import json
import sys

from .confirm import confirm


def register(sub) -> None:
    parser = sub.add_parser("config", help="settings: show, get, set, reset (checked as they are set)")
    csub = parser.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    p = csub.add_parser("path", help="where the settings file is")
    p.set_defaults(func=_path)
    p = csub.add_parser("show", help="every setting and its value; * marks a changed one")
    p.add_argument("--changed", action="store_true", help="only the settings that differ from the defaults")
    p.add_argument("--json", action="store_true", help="print a JSON object of dotted keys")
    p.set_defaults(func=_show)
    p = csub.add_parser("get", help="one setting's value")
    p.add_argument("key", help="a dotted key, e.g. reasoning.top_k")
    p.set_defaults(func=_get)
    p = csub.add_parser("set", help="change one setting (checked first)")
    p.add_argument("key", help="a dotted key, e.g. retrieval.retriever")
    p.add_argument("value", help="the new value: a number, true/false, or text")
    p.set_defaults(func=_set)
    p = csub.add_parser("reset", help="put settings back to their defaults")
    p.add_argument("keys", nargs="*", metavar="KEY", help="dotted keys to reset")
    p.add_argument("--all", action="store_true", help="reset every setting (window layout kept)")
    p.add_argument("--yes", action="store_true", help="do not ask before --all")
    p.set_defaults(func=_reset, unreadable_settings_ok=True)
    parser.set_defaults(lenient_settings=True)


def _warn(ctx) -> None:
    for message in ctx.settings_problems:
        print(f"warning: {message}", file=sys.stderr)


def _shown(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _path(ctx, args) -> int:
    print(ctx.paths.settings_file)
    return 0


def _show(ctx, args) -> int:
    from ..config import Settings
    from ..settings_schema import flatten, masked

    _warn(ctx)
    values, defaults = flatten(ctx.settings), flatten(Settings())
    values = {k: masked(k, v) for k, v in values.items()}
    if args.changed:
        values = {k: v for k, v in values.items() if v != defaults[k]}
    if args.json:
        print(json.dumps(values, indent=1))
        return 0
    width = max((len(k) for k in values), default=0)
    for key, value in values.items():
        changed = value != defaults[key]
        note = f"   (default {json.dumps(defaults[key])})" if changed else ""
        print(f"{'*' if changed else ' '} {key:<{width}} = {json.dumps(value)}{note}")
    if not values:
        print("Every setting is at its default.")
    return 0


def _get(ctx, args) -> int:
    from ..settings_schema import get_value, masked

    _warn(ctx)
    print(_shown(masked(args.key, get_value(ctx.settings, args.key))))
    return 0


def _set(ctx, args) -> int:
    from ..settings_schema import get_value, masked, parse_value, with_value

    _warn(ctx)
    current = get_value(ctx.settings, args.key)
    ctx.settings = with_value(ctx.settings, args.key, parse_value(args.value, current))
    ctx.save_settings()
    print(f"{args.key} = {json.dumps(masked(args.key, get_value(ctx.settings, args.key)))}")
    return 0


def _reset(ctx, args) -> int:
    from ..config import Settings
    from ..errors import ConfigError
    from ..settings_schema import get_value, with_default

    _warn(ctx)
    if args.all == bool(args.keys):
        raise ConfigError("Name the settings to reset, or pass --all (not both).",
                          hint="e.g. `searchain config reset reasoning.top_k`")
    if ctx.settings_error is not None and not args.all:
        raise ctx.settings_error  # one key cannot be reset in a file that cannot be read
    if args.all:
        if not confirm(f"Reset every setting in {ctx.paths.settings_file} to its default?", args.yes):
            print("Nothing changed.")
            return 1
        if ctx.settings_error is not None:  # not JSON: keep it, then start from the defaults
            aside = Settings.set_aside(ctx.paths)
            print(f"note: the unreadable settings file was kept as {aside}", file=sys.stderr)
        ctx.settings = Settings(ui=ctx.settings.ui)
        ctx.save_settings()
        print("Every setting is back at its default.")
        return 0
    for key in args.keys:
        ctx.settings = with_default(ctx.settings, key)
    ctx.save_settings()
    for key in args.keys:
        print(f"{key} = {json.dumps(get_value(ctx.settings, key))}")
    return 0
