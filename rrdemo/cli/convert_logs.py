"""`rrdemo convert-logs LOG... | --all`: bring older run logs to the current format, in place.

Nothing is run again (`rrdemo.runs.convert` says what changes by version); the gallery's settings
follow the conditions' new keys.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rrdemo.errors import RRError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `convert-logs` command."""
    parser = subparsers.add_parser(
        "convert-logs",
        help="convert older experiment logs to the current log format, in place",
        description="Convert experiment logs to the current log format, in place, from what "
        "they store (nothing is run again); a converted log resumes under the same sweep.",
    )
    parser.add_argument("logs", nargs="*", type=Path, help="experiment logs (.jsonl)")
    parser.add_argument(
        "--all", action="store_true", help="every log under assets/ and runs/ of this folder"
    )
    parser.add_argument(
        "--gallery",
        type=Path,
        help="the gallery manifest whose settings name conditions of these logs "
        "(default: the project's assets/gallery.json)",
    )
    parser.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    """Convert each log, print what changed, then rename the gallery's conditions."""
    from rrdemo.gallery import DEFAULT_MANIFEST
    from rrdemo.runs.convert import convert_file, is_log, rename_in_gallery

    paths = list(args.logs)
    if args.all:
        paths += [p for root in ("assets", "runs") for p in sorted(Path(root).rglob("*.jsonl"))]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise RRError(f"no such file: {', '.join(missing)}; give the .jsonl logs of runs")
    paths = [p for p in paths if is_log(p)]
    if not paths:
        raise RRError("no experiment log given (or found with --all under assets/ and runs/)")
    converted = {}
    for path in paths:
        changed, keys = convert_file(path)
        converted[path.resolve()] = keys
        print(f"{path}: {changed} line(s) converted" if changed else f"{path}: already current")
    gallery = args.gallery or DEFAULT_MANIFEST
    if gallery.is_file():
        renamed = rename_in_gallery(gallery, converted)
        print(f"{gallery}: {renamed} setting(s) renamed")
    return 0
