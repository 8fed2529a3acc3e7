"""`python -m rrdemo <command>`: each command lives in its own module with `register(subparsers)`.

A command module adds its parser and sets `func`, a handler `(args) -> int` (the exit code);
a hyphenated command lives in the module with underscores (`merge-logs`: `cli/merge_logs.py`).
Handlers raise `RRError` for bad input; `main` prints it as one line and exits 2, and so it does
for a file that cannot be written or read (an --out in a missing or read-only folder). A reader
that leaves early (`rrdemo status LOG | head`) ends the command quietly, with exit code 0.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from rrdemo.errors import RRError

COMMANDS = (
    "run",
    "replay",
    "extract",
    "theory",
    "experiment",
    "calibrate",
    "status",
    "report",
    "export",
    "merge-logs",
    "convert-logs",
    "reextract",
    "study",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rrdemo",
        description="Token-level round-robin (RR/RRMaj) vs majority voting (MAJ) under corrupted agents.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        module_name = f"rrdemo.cli.{name.replace('-', '_')}"
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:  # a command still being written is simply not offered
            if exc.name != module_name:
                raise
            continue
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not at exit where it cannot be caught
        return code
    except BrokenPipeError:
        # The reader has gone (`| head`): nothing is wrong. Point stdout at /dev/null so that
        # the interpreter's last flush at exit finds nowhere to fail either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except RRError as exc:
        print(f"rrdemo {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # an --out or --csv that cannot be written: its path and why
        detail = f"{exc.filename}: {exc.strerror}" if exc.filename else str(exc)
        print(f"rrdemo {args.command}: error: cannot write or read {detail}", file=sys.stderr)
        return 2
    except RecursionError:
        print(
            f"rrdemo {args.command}: error: an input is nested too deeply to read", file=sys.stderr
        )
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
