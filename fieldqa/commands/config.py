"""`fieldqa config show`: every effective value and where it came from."""

from __future__ import annotations

import argparse
import json

from engine.config import default_config_path, describe


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("config", help="show the effective configuration")
    csub = p.add_subparsers(dest="config_command", required=True)
    show = csub.add_parser("show", help="print effective values and their origin")
    show.add_argument("--json", action="store_true")
    from fieldqa.cli import common_options

    common_options(show)
    show.set_defaults(func=show_config)


def show_config(args: argparse.Namespace) -> int:
    from fieldqa.cli import config_from

    cfg = config_from(args)
    rows = describe(cfg)
    if args.json:
        print(json.dumps([{"key": k, "value": _plain(v), "origin": o, "doc": d} for k, v, o, d in rows],
                         ensure_ascii=False, indent=2))
        return 0
    print(f"# config file: {args.config or default_config_path()}")
    width = max(len(k) for k, *_ in rows)
    for key, value, origin, text in rows:
        print(f"{key:<{width}}  {_plain(value)!s:<28}  [{origin}]  {text}")
    return 0


def _plain(v):
    if isinstance(v, tuple):
        return list(v)
    if hasattr(v, "items"):
        return dict(v)
    return str(v) if v is not None and not isinstance(v, (int, float, bool, str)) else v
